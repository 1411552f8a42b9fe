import type { Command } from "commander";
import type { Io } from "./output.js";
import type { Env } from "./session.js";

/** What every command is given: its streams and the environment, never globals. */
export interface CommandContext {
  io: Io;
  env: Env;
  /** Resolves when a long-running command (the server) has finished. */
  setExitCode(code: number): void;
}

/** The options every command shares through the root program. */
export function globalOptions(command: Command): { profile: string } {
  const options = command.optsWithGlobals<{ profile?: string }>();
  return { profile: options.profile ?? "default" };
}
