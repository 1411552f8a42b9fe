import ora, { type Ora } from "ora";
import type { Io } from "./output.js";

/** A spinner shown while a task runs; `pause` stops it for a question and starts it again after. */
export interface Spinning {
  pause<T>(task: () => Promise<T>): Promise<T>;
}

/**
 * Runs `task` with a spinner on stderr saying `text`, when a person watches:
 * stdout and stderr both a terminal, and no `--json`. Otherwise (piped,
 * scripted, JSON) nothing is drawn. The spinner is gone when the task ends.
 */
export async function withSpinner<T>(io: Io, text: string, options: { json?: boolean | undefined }, task: (spinning: Spinning) => Promise<T>): Promise<T> {
  const stderr = io.stderr as NodeJS.WriteStream;
  const stdout = io.stdout as NodeJS.WriteStream;
  if (options.json || !stderr.isTTY || !stdout.isTTY) return task({ pause: (inner) => inner() });
  // discardStdin off: a question may come mid-task, and `dev` reads keys.
  const spinner: Ora = ora({ text, stream: withWidth(stderr), discardStdin: false }).start();
  try {
    return await task({
      async pause(inner) {
        spinner.stop();
        try {
          return await inner();
        } finally {
          spinner.start();
        }
      },
    });
  } finally {
    spinner.stop();
  }
}

/**
 * The stream with a width: a terminal that reports 0 columns (a pseudo-terminal
 * nobody sized, as `script` makes) would have ora clear lines without end.
 */
function withWidth(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  if (stream.columns) return stream;
  return new Proxy(stream, {
    get(target, property) {
      if (property === "columns") return 80;
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
