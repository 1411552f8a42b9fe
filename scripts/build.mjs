// `npm run build`: compiles src/ into dist/ and bundles the sandbox runner, unless nothing that goes into
// them changed since the last build. `npm start` and `npm test` run it first, and a full build costs
// seconds on every start; `--force` builds anyway.
//
// The inputs are hashed by content, not by modification time: a checkout or a copy touches times without
// changing what is built, and an edit that keeps the size and the second still changes the hash.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

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

if (!process.argv.includes("--force") && outputs.every((file) => existsSync(file)) && readStamp() === stamp) {
  process.exit(0);
}

// A build that fails half-way must not look up to date next time.
rmSync(stampFile, { force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
run(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")]);
run(process.execPath, [join(root, "scripts", "build-runner.mjs")]);
writeFileSync(stampFile, `${stamp}\n`);

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

/** Every file under a folder, tests excepted (tsconfig.build.json leaves them out of dist/). */
function listFiles(folder) {
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

function readStamp() {
  try {
    return readFileSync(stampFile, "utf8").trim();
  } catch {
    return null;
  }
}
