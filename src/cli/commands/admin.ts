import type { Command } from "commander";
import { ConfigError, loadConfig, type RunnelConfig } from "../../config/config.js";
import type { CommandContext } from "../command-context.js";

export function registerAdmin(program: Command, context: CommandContext): void {
  const admin = program.command("admin").description("Operate on a server's data folder and database directly (run where the server runs, while it is stopped)");

  admin
    .command("rotate-master-key")
    .description("Seal every secret again with a new master key, and put the new key where the old one was")
    .option("--data-dir <dir>", "the server's data folder (env RUNNEL_DATA_DIR, default ./.runnel)")
    .addHelpText("after", "\nReads the server's settings from the environment: RUNNEL_DATA_DIR, DATABASE_URL, RUNNEL_MASTER_KEY or RUNNEL_MASTER_KEY_FILE.")
    .action(async (options: { dataDir?: string }) => {
      let config: RunnelConfig;
      try {
        config = loadConfig(context.env, { dataDir: options.dataDir }, { cwd: process.cwd(), stdoutIsTty: false });
      } catch (error) {
        if (error instanceof ConfigError) throw new Error(`The settings are not usable: ${error.message}`);
        throw error;
      }
      // Loaded here: every other command is a thin HTTP client and starts faster without the store.
      const { rotateConfiguredMasterKey } = await import("../../server/rotate-master-key.js");
      const outcome = await rotateConfiguredMasterKey(config);
      if (outcome.keyToShow) context.io.stdout.write(`${outcome.keyToShow}\n`);
      context.io.stderr.write(`${outcome.summary}\n`);
    });
}
