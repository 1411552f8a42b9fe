/**
 * Everything user code prints goes to the current call's logs, never to the
 * runner's real stdout/stderr: console methods are formatted as console does
 * (util.format), and writes to process.stdout/stderr are taken as they are.
 * Console methods not replaced here (table, trace, group…) write through
 * process.stdout/stderr.write, so they are captured as well.
 */
import { format, inspect, type InspectOptions } from "node:util";
import type { LogStream } from "../protocol.js";

export type OutputSink = (stream: LogStream, text: string) => void;

function chunkText(chunk: unknown, encoding: unknown): string {
  if (typeof chunk === "string") return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString(typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
  return String(chunk);
}

function captureStream(stream: NodeJS.WriteStream, name: LogStream, sink: OutputSink): void {
  const write = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    // A write ends with its newline, which the log entry does not repeat.
    sink(name, chunkText(chunk, encoding).replace(/\n$/, ""));
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") queueMicrotask(() => (done as () => void)());
    return true;
  };
  stream.write = write as NodeJS.WriteStream["write"];
}

export function installCapture(sink: OutputSink): void {
  captureStream(process.stdout, "stdout", sink);
  captureStream(process.stderr, "stderr", sink);
  const toStdout = (...args: unknown[]): void => sink("stdout", format(...args));
  const toStderr = (...args: unknown[]): void => sink("stderr", format(...args));
  console.log = toStdout;
  console.info = toStdout;
  console.debug = toStdout;
  console.warn = toStderr;
  console.error = toStderr;
  console.dir = (value: unknown, options?: InspectOptions): void => sink("stdout", inspect(value, { ...options, customInspect: false }));
}
