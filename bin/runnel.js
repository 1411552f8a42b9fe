#!/usr/bin/env node
// The built CLI lives in dist/; `npm run build` (run by `npm start` and `npm test`) makes it.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write("runnel is not built yet: run `npm run build` in the Runnel folder first.\n");
  process.exit(1);
}
const { main } = await import(entry.href);
process.exitCode = await main(process.argv, process.env);
