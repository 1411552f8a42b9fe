/**
 * docs/reliability.md keeps the latest figures of `npm run chaos` and
 * `npm run fuzz` between markers (`<!-- chaos:start -->` … `<!-- chaos:end -->`),
 * rewritten by the scripts so that the page says what was last measured.
 */
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

export const RELIABILITY_DOC = fileURLToPath(new URL("../../docs/reliability.md", import.meta.url));

/** `text` with the section between the markers of `name` replaced by `body`; the markers must be there. */
export function replaceSection(text: string, name: string, body: string): string {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`docs/reliability.md has no ${start} … ${end} section to write the figures into.`);
  return `${text.slice(0, from + start.length)}\n${body.trim()}\n${text.slice(to)}`;
}

export async function writeSection(name: string, body: string, file = RELIABILITY_DOC): Promise<void> {
  await writeFile(file, replaceSection(await readFile(file, "utf8"), name, body));
}
