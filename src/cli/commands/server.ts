import { totalmem } from "node:os";
import type { Command } from "commander";
import { ConfigError, loadConfig, type RunnelConfig } from "../../config/config.js";
import type { CommandContext } from "../command-context.js";

export function registerServer(program: Command, context: CommandContext): void {
  program
    .command("server")
    .description("Run the Runnel server (embedded SQLite by default; DATABASE_URL=postgres://… for PostgreSQL)")
    .option("--role <role>", "api | worker | all: what this process does (env RUNNEL_ROLE, default all; api and worker need RUNNEL_QUEUE and DATABASE_URL)")
    .option("--port <port>", "port to listen on (env RUNNEL_PORT, default 8080; 0 picks a free one)")
    .option("--host <host>", "address to listen on (env RUNNEL_HOST, default 0.0.0.0)")
    .option("--data-dir <dir>", "folder for the database and keys (env RUNNEL_DATA_DIR, default ./.runnel)")
    .addHelpText(
      "after",
      "\nEnvironment: RUNNEL_DATA_DIR, RUNNEL_PORT, RUNNEL_HOST, RUNNEL_PUBLIC_URL, DATABASE_URL, RUNNEL_ROLE, RUNNEL_QUEUE, REDIS_URL, RUNNEL_LOG_LEVEL,\n" +
        "RUNNEL_LOG_FORMAT (json|pretty), RUNNEL_SHUTDOWN_TIMEOUT_SECONDS, RUNNEL_RATE_LIMIT_PER_MINUTE.",
    )
    .action(async (options: { role?: string; port?: string; host?: string; dataDir?: string }) => {
      let config: RunnelConfig;
      try {
        config = loadConfig(context.env, options, { cwd: process.cwd(), stdoutIsTty: Boolean((context.io.stdout as { isTTY?: boolean }).isTTY), totalMemoryBytes: totalmem() });
      } catch (error) {
        if (error instanceof ConfigError) throw new Error(`Runnel cannot start: ${error.message}`);
        throw error;
      }
      context.setExitCode(await runUntilSignalled(config, context));
    });
}

/** Runs the server until SIGTERM or SIGINT, then shuts it down gracefully; returns the exit code. */
async function runUntilSignalled(config: RunnelConfig, context: CommandContext): Promise<number> {
  // Loaded here, not at the top: every other command is a thin HTTP client and starts faster without the server.
  const { createLogger } = await import("../../server/logger.js");
  const { startServer } = await import("../../server/start-server.js");
  const { explainStartupError } = await import("../../server/startup-errors.js");
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  // Heard from before the start: the server listens, and records itself in the process registry, before startServer
  // returns, and a SIGTERM meanwhile killed the process at once (its registry row was left to show lost). A signal
  // during the start now stops the server once it has started; a start that then does not finish within the
  // shutdown timeout ends the process.
  let started = false;
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });
  void signalled.then(() => {
    if (started) return;
    logger.warn("a stop was asked during the start: stopping once the server has started (send the signal again to stop at once)");
    setTimeout(() => {
      if (started) return;
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, "the start did not finish in time after a stop was asked; stopping now");
      process.exit(1);
    }, config.shutdownTimeoutMs).unref();
  });
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({ config, logger, announce: (text) => context.io.stderr.write(`${text}\n`) });
  } catch (error) {
    logger.debug({ err: error }, "start-up failed");
    throw new Error(`Runnel cannot start: ${explainStartupError(error, config)}`);
  }
  started = true;

  const signal = await signalled;
  logger.info({ signal }, "shutting down: no new requests; finishing the ones in flight");

  // A second signal, or work that will not finish, must not keep the process hanging.
  const forced = new Promise<number>((resolve) => {
    const timer = setTimeout(() => {
      logger.error({ timeoutMs: config.shutdownTimeoutMs }, "shutdown took too long; stopping now");
      resolve(1);
      // The drain (RUNNEL_SHUTDOWN_DRAIN_SECONDS) is time the server keeps serving on purpose: not counted against the timeout.
    }, config.shutdownTimeoutMs + config.shutdownDrainMs);
    timer.unref();
    process.once(signal === "SIGINT" ? "SIGINT" : "SIGTERM", () => {
      logger.warn("second signal: stopping now");
      resolve(1);
    });
  });
  const clean = server.close().then(() => {
    logger.info("stopped cleanly");
    return 0;
  });
  const code = await Promise.race([clean, forced]);
  // A forced stop leaves work behind that would keep the process alive; end it.
  if (code !== 0) process.exit(code);
  return code;
}
