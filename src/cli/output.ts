import Table from "cli-table3";

/** Where a command writes: data to stdout, messages and errors to stderr. */
export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export function printJson(io: Io, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function printLines(io: Io, lines: string[]): void {
  io.stdout.write(`${lines.join("\n")}\n`);
}

/** A plain table with a header row, for lists. */
export function printTable(io: Io, head: string[], rows: string[][]): void {
  const table = new Table({ head, style: { head: [], border: [] } });
  table.push(...rows);
  io.stdout.write(`${table.toString()}\n`);
}

export function formatTime(epochSeconds: number | null): string {
  return epochSeconds === null ? "-" : new Date(epochSeconds * 1000).toISOString().replace(".000Z", "Z");
}
