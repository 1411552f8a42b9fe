// The sandbox runner as one file (dist/sandbox/runner-bundle/runner.cjs): a runner may read only its
// own folder, so everything it imports (its own modules, pure domain rules such as expressions) is bundled in.
import { build } from "esbuild";
import { rm } from "node:fs/promises";

const outdir = new URL("../dist/sandbox/runner-bundle/", import.meta.url);
await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: [new URL("../src/sandbox/runner/main.ts", import.meta.url).pathname],
  outfile: new URL("runner.cjs", outdir).pathname,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  logLevel: "warning",
});
