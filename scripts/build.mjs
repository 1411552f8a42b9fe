// `npm run build`: compiles src/ into dist/ and bundles the sandbox runner, unless nothing that goes into
// them changed since the last build. `npm start` and `npm test` run it first, and a full build costs
// seconds on every start; `--force` builds anyway.
//
// The web console (ui/) is built by Vite into dist/ui with its own stamp: an edit to the console does not
// recompile the server, nor the reverse.
//
// The inputs are hashed by content, not by modification time: a checkout or a copy touches times without
// changing what is built, and an edit that keeps the size and the second still changes the hash.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const stampFile = join(root, "dist", ".build-stamp");
/** What a build leaves; a stamp without them (dist/ partly deleted) does not count. */
const outputs = [join(root, "dist", "cli", "main.js"), join(root, "dist", "sandbox", "runner-bundle", "runner.cjs")];

const inputs = [
  ...listFiles(join(root, "src")),
  join(root, "tsconfig.json"),
  join(root, "tsconfig.build.json"),
  join(root, "scripts", "build.mjs"),
  join(root, "scripts", "build-runner.mjs"),
  // Installed packages: their types are compiled against and their code is bundled into the runner.
  join(root, "package-lock.json"),
];
const stamp = fingerprint(inputs);
const force = process.argv.includes("--force");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

if (force || !outputs.every((file) => existsSync(file)) || readStamp(stampFile) !== stamp) {
  // A build that fails half-way must not look up to date next time.
  rmSync(stampFile, { force: true });
  run(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")]);
  run(process.execPath, [join(root, "scripts", "build-runner.mjs")]);
  writeFileSync(stampFile, `${stamp}\n`);
}

// The catalog (catalog/ → dist/catalog/manifest.json) has its own fingerprint, checked by the step itself.
// (A tree without the step, as the build script's own tests use, has no catalog to build.)
const catalogStep = join(root, "scripts", "build-catalog.mjs");
if (existsSync(catalogStep)) run(process.execPath, [catalogStep]);

// The console imports the API's schemas as types, so src/ is among its inputs.
const uiStampFile = join(root, "dist", ".ui-build-stamp");
const uiStamp = fingerprint([
  ...listFiles(join(root, "ui")).filter((file) => !file.endsWith("README.md")),
  ...listFiles(join(root, "src", "api", "schemas")),
  join(root, "package-lock.json"),
  join(root, "scripts", "build.mjs"),
]);
const [nodeMajor, nodeMinor] = process.versions.node.split(".").map(Number);
// Vite 8 runs on Node.js 20.19 and later; package.json's engines allow 20.6: the server still builds and runs there.
const canBuildConsole = nodeMajor > 20 || (nodeMajor === 20 && nodeMinor >= 19);
// A tree without ui/ (the build script's own tests use one) has no console to build.
const hasConsole = existsSync(join(root, "ui", "vite.config.ts"));
if (!hasConsole) {
  // Nothing to do.
} else if (!canBuildConsole) {
  console.warn(`The web console was not built: its build (Vite) needs Node.js 20.19 or later, this is ${process.versions.node}. The server runs; / says how to build the console.`);
} else if (force || !existsSync(join(root, "dist", "ui", "index.html")) || readStamp(uiStampFile) !== uiStamp) {
  rmSync(uiStampFile, { force: true });
  run(process.execPath, [tsc, "-p", join(root, "ui", "tsconfig.json")]);
  await buildConsole();
  writeFileSync(uiStampFile, `${uiStamp}\n`);
}

/** Vite's build of ui/ into dist/ui, then the size a first visit downloads. */
async function buildConsole() {
  // Vite keeps a NODE_ENV it finds; a build started from the tests (NODE_ENV=test) would bundle React's development build.
  process.env.NODE_ENV = "production";
  const { build } = await import("vite");
  await build({ configFile: join(root, "ui", "vite.config.ts"), mode: "production", logLevel: "warn" });
  const html = readFileSync(join(root, "dist", "ui", "index.html"), "utf8");
  // The entry script and the chunks it preloads: what the first page needs before it can run. Lazy routes come later.
  const initial = [...new Set([...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((match) => match[1]))];
  const gzipped = initial.reduce((sum, file) => sum + gzipSync(readFileSync(join(root, "dist", "ui", file))).length, 0);
  const kb = (gzipped / 1024).toFixed(1);
  console.log(`Web console: initial JavaScript ${kb} KB gzipped (${initial.length} file${initial.length === 1 ? "" : "s"}; target under 250 KB).`);
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Every file under a folder (none when it does not exist), tests excepted (tsconfig.build.json leaves them out of dist/). */
function listFiles(folder) {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith(".test.ts"))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}

/** One hash over the inputs' paths and contents, in a fixed order. */
function fingerprint(files) {
  const hash = createHash("sha256");
  for (const file of [...files].sort()) {
    hash.update(relative(root, file));
    hash.update("\0");
    hash.update(existsSync(file) ? readFileSync(file) : "(missing)");
    hash.update("\0");
  }
  return hash.digest("hex");
}

function readStamp(file) {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}
