/** What a source's logs show of its calls: what each printed, its error, and the problems found with its emits. */
import type { LogEntry } from "../../domain/sources.js";
import type { InvokeResult } from "../../sandbox/sandbox.js";
import type { SandboxError } from "../../sandbox/sandbox-error.js";

/** A log line before it is stored. */
export type LogLine = Pick<LogEntry, "stream" | "text" | "ts">;

/** The log lines of calls: what each printed, then its error, then the problems found with its emits. */
export function logEntries(results: InvokeResult[], problems: string[], at: number): LogLine[] {
  const entries: LogLine[] = [];
  for (const result of results) {
    for (const log of result.logs) entries.push({ stream: log.stream, text: log.text, ts: log.ts });
    if (result.error) entries.push({ stream: "stderr", text: describeError(result.error), ts: at });
  }
  for (const problem of problems) entries.push({ stream: "system", text: problem, ts: at });
  return entries;
}

/** An error as a source's logs show it: name, message, then the stack. */
export function describeError(error: SandboxError): string {
  const head = `${error.name}: ${error.message}`;
  if (!error.stack) return `${head} [${error.code}]`;
  return error.stack.startsWith(head) ? `${error.stack} [${error.code}]` : `${head}\n${error.stack} [${error.code}]`;
}
