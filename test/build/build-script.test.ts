import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");

/**
 * scripts/build.mjs in a small project of its own: the real script and the real TypeScript, a stand-in for
 * the runner bundler that counts its runs. `npm start` runs the build every time, so an unchanged tree must
 * cost no build, and any change to what goes in must cost one.
 */
// Each test runs the real build two to four times (a Node.js and a TypeScript start each): under the suite's load on
// two cores that passed the 30 s default (15 s a build, against 2-4 s alone).
describe("npm run build (scripts/build.mjs)", { timeout: 120_000 }, () => {
  let root: string;
  const build = async (...args: string[]) => run(process.execPath, [join(root, "scripts", "build.mjs"), ...args], { cwd: root });
  const bundles = async () => (await readFile(join(root, "bundles.log"), "utf8").catch(() => "")).length;
  const compiled = () => readFile(join(root, "dist", "cli", "main.js"), "utf8");

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "runnel-build-"));
    await mkdir(join(root, "scripts"));
    await mkdir(join(root, "src", "cli"), { recursive: true });
    await copyFile(join(repo, "scripts", "build.mjs"), join(root, "scripts", "build.mjs"));
    await symlink(join(repo, "node_modules"), join(root, "node_modules"));
    await writeFile(
      join(root, "scripts", "build-runner.mjs"),
      `import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
const out = new URL("../dist/sandbox/runner-bundle/", import.meta.url);
mkdirSync(out, { recursive: true });
writeFileSync(new URL("runner.cjs", out), "");
appendFileSync(new URL("../bundles.log", import.meta.url), "x");
`,
    );
    // skipLibCheck: what is tested is when the script builds, not TypeScript's own lib files (checking them was
    // half of each build's CPU: the file's 31 s of CPU became 18).
    await writeFile(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", strict: true, types: [], noEmit: true, skipLibCheck: true }, include: ["src"] }));
    await writeFile(join(root, "tsconfig.build.json"), JSON.stringify({ extends: "./tsconfig.json", compilerOptions: { noEmit: false, rootDir: "src", outDir: "dist" }, include: ["src"] }));
    await writeFile(join(root, "package-lock.json"), "{}\n");
    await writeFile(join(root, "src", "cli", "main.ts"), "export const answer: number = 1;\n");
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("builds once, skips while nothing changed, and builds again when a source changes", async () => {
    await build();
    expect(await bundles()).toBe(1);
    expect(await compiled()).toContain("answer = 1");

    await build();
    await writeFile(join(root, "src", "cli", "main.ts"), "export const answer: number = 1;\n"); // same text, newer time
    await build();
    expect(await bundles()).toBe(1);

    await writeFile(join(root, "src", "cli", "main.ts"), "export const answer: number = 2;\n");
    await build();
    expect(await bundles()).toBe(2);
    expect(await compiled()).toContain("answer = 2");
  });

  it("builds again when an output is gone, when tsconfig changes, or with --force", async () => {
    await rm(join(root, "dist", "sandbox"), { recursive: true });
    await build();
    expect(await bundles()).toBe(3);

    const config = join(root, "tsconfig.build.json");
    await writeFile(config, (await readFile(config, "utf8")).replace('"noEmit":false', '"noEmit":false,"removeComments":true'));
    await build();
    expect(await bundles()).toBe(4);

    await build("--force");
    expect(await bundles()).toBe(5);
  });

  it("fails with the compiler's errors, and does not count a failed build as done", async () => {
    await writeFile(join(root, "src", "cli", "main.ts"), "export const answer: number = 'three';\n");
    await expect(build()).rejects.toMatchObject({ stdout: expect.stringContaining("TS2322") });
    await expect(build()).rejects.toThrow();
  });
});
