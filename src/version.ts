import { readFileSync } from "node:fs";

/** Runnel's version, from package.json (one folder up from both src/ and dist/). */
export const RUNNEL_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
