// `npm test` after the build: the type check (tsc on src/ and test/) and the suite (Vitest) at once. The type
// check is about a minute of one core, and the suite spends much of its time waiting on servers, child
// processes and timers; one after the other, CI paid that minute twice (once per Node.js). The suite's output
// streams as it comes; the type check's is held and printed after it, so the two never interleave. Fails when
// either fails. Arguments go to Vitest (`npm test -- test/api`).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const resolve = createRequire(import.meta.url).resolve;

const typeCheckStarted = Date.now();
// Incremental, its record in dist/ (which .ci/run copies for the second Node.js): a check of unchanged files
// reads that record instead of checking them again (about 10 s of CPU instead of 40 here).
const typeCheckArgs = ["-p", "tsconfig.json", "--noEmit", "--incremental", "--tsBuildInfoFile", join("dist", ".typecheck.tsbuildinfo")];
const typeCheck = spawn(process.execPath, [resolve("typescript/bin/tsc"), ...typeCheckArgs], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
let typeCheckOutput = "";
typeCheck.stdout.on("data", (chunk) => (typeCheckOutput += chunk));
typeCheck.stderr.on("data", (chunk) => (typeCheckOutput += chunk));
const typeCheckDone = exitOf(typeCheck);

const suite = spawn(process.execPath, [join(dirname(resolve("vitest/package.json")), "vitest.mjs"), "run", ...process.argv.slice(2)], { cwd: root, stdio: "inherit" });
const suiteDone = exitOf(suite);

// Ctrl-C stops both (each also gets the terminal's SIGINT; this covers a signal sent to this process alone).
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    typeCheck.kill(signal);
    suite.kill(signal);
  });
}

const [typeCheckCode, suiteCode] = await Promise.all([typeCheckDone, suiteDone]);
const seconds = Math.round((Date.now() - typeCheckStarted) / 1000);
if (typeCheckCode === 0) console.log(`\nType check (tsc --noEmit, src and test): no errors.`);
else console.log(`\nType check (tsc --noEmit, src and test) failed (exit ${typeCheckCode}):\n${typeCheckOutput}`);
console.log(`npm test: type check ${typeCheckCode === 0 ? "passed" : "FAILED"}, suite ${suiteCode === 0 ? "passed" : "FAILED"} (${seconds} s).`);
process.exit(typeCheckCode === 0 && suiteCode === 0 ? 0 : 1);

/** A child's exit code (a signal counts as a failure). */
function exitOf(child) {
  return new Promise((resolveExit) => {
    child.on("error", () => resolveExit(1));
    child.on("exit", (code) => resolveExit(code ?? 1));
  });
}
