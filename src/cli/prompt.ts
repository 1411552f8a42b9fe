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
