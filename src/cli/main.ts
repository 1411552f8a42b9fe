import { Command, CommanderError } from "commander";
import { RUNNEL_VERSION } from "../version.js";
import type { CommandContext } from "./command-context.js";
import { describeError } from "./describe-error.js";
import { registerDelete } from "./commands/delete.js";
import { registerDeploy } from "./commands/deploy.js";
import { registerDescribe } from "./commands/describe.js";
import { registerDev } from "./commands/dev.js";
import { registerEnv } from "./commands/env.js";
import { registerAccounts } from "./commands/accounts.js";
import { registerErrors } from "./commands/errors.js";
import { registerVersions } from "./commands/versions.js";
import { registerEvents } from "./commands/events.js";
import { registerInit } from "./commands/init.js";
import { registerKeys } from "./commands/keys.js";
import { registerList } from "./commands/list.js";
import { registerLogin } from "./commands/login.js";
import { registerLogs } from "./commands/logs.js";
import { registerOpen } from "./commands/open.js";
import { registerOutbox } from "./commands/outbox.js";
import { registerPublish } from "./commands/publish.js";
import { registerRun } from "./commands/run.js";
import { registerRuns } from "./commands/runs.js";
import { registerAdmin } from "./commands/admin.js";
import { registerServer } from "./commands/server.js";
import { registerStores } from "./commands/stores.js";
import { registerStatus } from "./commands/status.js";
import { registerSubscriptions } from "./commands/subscriptions.js";
import { registerUpdate } from "./commands/update.js";
import { registerUsers } from "./commands/users.js";
import { registerWebhooks } from "./commands/webhooks.js";
import { registerWhoami } from "./commands/whoami.js";
import type { Io } from "./output.js";
import type { Env } from "./session.js";

/** Builds the `runnel` program; separate from running it so tests can inspect it. */
export function buildProgram(context: CommandContext): Command {
  const program = new Command("runnel")
    .description("Runnel: event-driven workflows on your own machines")
    .version(RUNNEL_VERSION, "-v, --version")
    .option("-p, --profile <name>", "the saved login to use (see `runnel login`)", "default")
    .showHelpAfterError("(run with --help for usage)")
    .configureOutput({
      writeOut: (text) => context.io.stdout.write(text),
      writeErr: (text) => context.io.stderr.write(text),
    })
    .exitOverride();

  registerServer(program, context);
  registerAdmin(program, context);
  registerLogin(program, context);
  registerWhoami(program, context);
  registerOpen(program, context);
  registerKeys(program, context);
  registerUsers(program, context);
  registerInit(program, context);
  registerDeploy(program, context);
  registerPublish(program, context);
  registerDev(program, context);
  registerUpdate(program, context);
  registerDelete(program, context);
  registerDescribe(program, context);
  registerList(program, context);
  registerEvents(program, context);
  registerLogs(program, context);
  registerRun(program, context);
  registerOutbox(program, context);
  registerStores(program, context);
  registerRuns(program, context);
  registerErrors(program, context);
  registerVersions(program, context);
  registerSubscriptions(program, context);
  registerWebhooks(program, context);
  registerEnv(program, context);
  registerAccounts(program, context);
  registerStatus(program, context);

  return program;
}

/** Runs the CLI; returns the process exit code. Errors become one clear line on stderr. */
export async function main(argv: string[], env: Env, io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }): Promise<number> {
  let exitCode = 0;
  const program = buildProgram({ io, env, setExitCode: (code) => (exitCode = code) });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode; // commander has already printed it
    io.stderr.write(`${describeError(error)}\n`);
    return 1;
  }
}

