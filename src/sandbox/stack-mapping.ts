/**
 * Stack traces as the component's author wrote the code. A runner's frames
 * point into the bundle it loaded (a path under the server's runners'
 * folder); here, on the host, each such frame is mapped through the bundle's
 * source map to the component's own file, line and column, and every other
 * path of the server is taken out: no stack, log line or `$errors` event
 * shows where the server keeps its files.
 */
import { SourceMap } from "node:module";
import { basename } from "node:path";
import type { SandboxError } from "./sandbox-error.js";

/**
 * The source maps of a bundle file: one part per component in it, from the
 * (1-based) line its code starts at. A single component starts at line 1; a
 * workflow's steps at their offsets in the combined file (workflow-bundle.ts).
 */
export interface BundleSourceMaps {
  parts: Array<{ fromLine: number; map: string | null }>;
}

/**
 * The bundle a runner ran: its file's name (a runner reads it from a folder
 * of its own, under the same name: bundle-placement.ts) and its maps.
 */
export interface MappedBundle {
  file: string;
  sourceMaps?: BundleSourceMaps | undefined;
}

/** A frame's location: `(file:line:col)` or, without a function name, after `at `. */
const FRAME = /^(\s+at (?:.*? \()?)(.+?):(\d+):(\d+)(\)?)$/;
/**
 * Frames longer than this are not parsed: no real frame is, and a regular
 * expression over a hostile megabyte-long log line would take its time.
 */
const MAX_FRAME_CHARS = 4096;
/** Characters that end a path written in a message or a log line. */
const PATH_STOPS = new Set([" ", "\t", "\r", "'", '"', "`", "(", ")", ":", ",", "[", "]", "<", ">"]);

/**
 * `/…/component.cjs` (and `file:///…/component.cjs`) in a message or a log
 * line, whatever folder it is in, becomes `component.cjs`. By hand rather
 * than by a regular expression: linear in the text, however it is made.
 */
function withoutBundlePaths(text: string, fileName: string): string {
  let at = text.indexOf(fileName);
  if (at < 0) return text;
  let out = "";
  let last = 0;
  while (at >= 0) {
    const end = at + fileName.length;
    const after = text[end];
    if (at > last && text[at - 1] === "/" && !(after !== undefined && /[\w.-]/.test(after))) {
      let start = at - 1;
      while (start > last && !PATH_STOPS.has(text[start - 1]!)) start -= 1;
      const head = text.slice(last, start);
      out += `${head.endsWith("file:") ? head.slice(0, -"file:".length) : head}${fileName}`;
      last = end;
    }
    at = text.indexOf(fileName, end);
  }
  return out + text.slice(last);
}

/** Parsed maps, by the map's text: a bundle's errors are mapped again and again with the same maps. */
const parsedMaps = new Map<string, SourceMap | null>();
/** Few: the map of a bundle with large packages is megabytes once parsed. */
const MAX_PARSED_MAPS = 32;

function parsed(map: string): SourceMap | null {
  let found = parsedMaps.get(map);
  if (found !== undefined) return found;
  try {
    found = new SourceMap(JSON.parse(map) as ConstructorParameters<typeof SourceMap>[0]);
  } catch {
    found = null;
  }
  // The oldest goes first: Map keeps insertion order.
  if (parsedMaps.size >= MAX_PARSED_MAPS) parsedMaps.delete(parsedMaps.keys().next().value!);
  parsedMaps.set(map, found);
  return found;
}

/** Where a line:col of the bundle comes from: `component.ts:3:11`, or the bundle's own line when there is no map for it. */
function mapLocation(line: number, column: number, maps: BundleSourceMaps | undefined, fileName: string): string {
  const parts = maps?.parts ?? [];
  let part: BundleSourceMaps["parts"][number] | undefined;
  for (const candidate of parts) if (candidate.fromLine <= line) part = candidate;
  const map = part?.map ? parsed(part.map) : null;
  if (part && map) {
    const entry = map.findEntry(line - part.fromLine, column - 1) as { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
    if (entry?.originalSource !== undefined && entry.originalLine !== undefined && entry.originalColumn !== undefined) {
      return `${relativeSource(entry.originalSource)}:${entry.originalLine + 1}:${entry.originalColumn + 1}`;
    }
  }
  // No map (a component saved before maps were kept): the line in the bundle, named by the bundle alone.
  return `${fileName}:${line}:${column}`;
}

/** Node's SourceMap resolves sources to `file://` URLs against nothing; the map's own sources are relative already. */
function relativeSource(source: string): string {
  const path = source.startsWith("file://") ? decodeURIComponent(source.slice("file://".length)) : source;
  const modules = path.lastIndexOf("node_modules/");
  if (modules >= 0) return path.slice(modules);
  return path.replace(/^\/+/, "");
}

/** Where an eval'd function was made, inside its frame: `(path:line:col)`. */
const EVAL_ORIGIN = /\((?:file:\/\/)?(\/[^\s()]*):(\d+):(\d+)\)/g;

function originOf(path: string, line: number, column: number, bundle: MappedBundle, fileName: string): string {
  if (basename(path) === fileName) return mapLocation(line, column, bundle.sourceMaps, fileName);
  const modules = path.lastIndexOf("/node_modules/");
  return modules >= 0 ? `${path.slice(modules + 1)}:${line}:${column}` : `${basename(path)}:${line}:${column}`;
}

/** A frame's new text, or null when it is a frame of the server that says nothing to the author. */
function mapFrame(line: string, bundle: MappedBundle, fileName: string): string | null {
  if (line.length > MAX_FRAME_CHARS || !/^\s+at /.test(line)) return line;
  const match = FRAME.exec(line);
  if (!match) return line;
  const [, head, file, lineText, columnText, tail] = match as unknown as [string, string, string, string, string, string];
  const path = file.startsWith("file://") ? file.slice("file://".length) : file;
  if (basename(path) === fileName) return `${head}${mapLocation(Number(lineText), Number(columnText), bundle.sourceMaps, fileName)}${tail}`;
  // node:internal/…, <anonymous>: no path of the server. `eval at run (…/component.cjs:3:5), <anonymous>`: the place of the eval, mapped.
  if (!path.startsWith("/")) return line.includes("eval at ") ? line.replace(EVAL_ORIGIN, (_whole, origin: string, l: string, c: string) => `(${originOf(origin, Number(l), Number(c), bundle, fileName)})`) : line;
  const modules = path.lastIndexOf("/node_modules/");
  if (modules >= 0) return `${head}${path.slice(modules + 1)}:${lineText}:${columnText}${tail}`;
  // The runner's bundle, dist/, anything else on the server's disk.
  return null;
}

/** The text with its frames mapped and the server's paths taken out. */
export function mapStackText(text: string, bundle: MappedBundle): string {
  // Most log lines are not stacks: they pass untouched, and fast.
  if (!text.includes("/")) return text;
  const fileName = basename(bundle.file);
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    const mapped = mapFrame(line, bundle, fileName);
    if (mapped === null) continue;
    lines.push(mapped === line ? withoutBundlePaths(line, fileName) : mapped);
  }
  return lines.join("\n");
}

export function mapSandboxError(error: SandboxError, bundle: MappedBundle): SandboxError {
  const fileName = basename(bundle.file);
  const mapped: SandboxError = { ...error, message: withoutBundlePaths(error.message, fileName) };
  if (error.stack !== undefined) mapped.stack = mapStackText(error.stack, bundle);
  return mapped;
}

/** The maps of a bundle that holds one component. */
export function singleBundleMaps(map: string | null): BundleSourceMaps {
  return { parts: [{ fromLine: 1, map }] };
}
