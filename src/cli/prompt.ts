import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/**
 * Asks questions on the terminal, or reads answers line by line from a pipe.
 * Lines are buffered, so answers piped in all at once are not lost between
 * questions; a hidden question does not echo what is typed.
 */
export class Prompter {
  private muted = false;
  private readonly lines: AsyncIterator<string>;
  private readonly close: () => void;

  constructor(
    private readonly input: NodeJS.ReadableStream & { isTTY?: boolean },
    private readonly output: NodeJS.WritableStream,
  ) {
    const echo = new Writable({
      write: (chunk, _encoding, done) => {
        if (!this.muted) output.write(chunk);
        done();
      },
    });
    const rl = createInterface({ input, output: echo, terminal: Boolean(input.isTTY) });
    this.lines = rl[Symbol.asyncIterator]();
    this.close = () => rl.close();
  }

  /** Asks, and returns the trimmed answer, or the fallback when the answer is empty. */
  async ask(question: string, options: { fallback?: string; hidden?: boolean } = {}): Promise<string> {
    const hint = options.fallback ? ` [${options.fallback}]` : "";
    this.output.write(`${question}${hint}: `);
    this.muted = Boolean(options.hidden);
    const next = await this.lines.next();
    this.muted = false;
    if (options.hidden && this.input.isTTY) this.output.write("\n");
    if (next.done) throw new Error(`No answer to "${question}": the input ended.`);
    return next.value.trim() || options.fallback || "";
  }

  done(): void {
    this.close();
  }
}

/** A yes/no question's streams: asked on stderr so that stdout stays data. */
export interface ConfirmIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
}

/**
 * Asks a yes/no question on a terminal; "y" or "yes" is yes, anything else no.
 * Without a terminal it never asks (a script must not hang, nor have its
 * input taken for an answer): it fails, naming the flag that says yes.
 */
export async function confirm(io: ConfirmIo, question: string, flag: string): Promise<boolean> {
  if (!io.stdin.isTTY) throw new Error(`${question} There is no terminal to ask on: pass ${flag} to go ahead.`);
  const prompter = new Prompter(io.stdin, io.stderr);
  try {
    const answer = await prompter.ask(`${question} [y/N]`);
    return /^y(es)?$/i.test(answer);
  } finally {
    prompter.done();
  }
}
