import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { placeBundle } from "../sandbox/bundle-placement.js";
import { BundleFiles } from "./bundle-files.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "runnel-bundles-"));
  roots.push(root);
  return root;
}

describe("BundleFiles", () => {
  it("never leaves a half-written file in a bundle's folder, so a runner given the folder meanwhile gets whole files", async () => {
    const root = tempRoot();
    const runnerDir = join(root, "runners", "r-1");
    const code = "module.exports = { run() { return 1 } };\n".repeat(2_000);
    const hash = "a".repeat(64);
    const bundlesRoot = join(root, "bundles");
    // Writers of the same code at once (several saves, several processes), placed into a runner while they write:
    // the failure this guards against was a pending file listed, then renamed away before it was linked.
    const writers = Array.from({ length: 24 }, () => new BundleFiles(bundlesRoot).fileFor(hash, async () => code));
    const first = await writers[0]!;
    const placements: string[] = [];
    for (let i = 0; i < 50; i++) placements.push(placeBundle(runnerDir, first));
    await Promise.all(writers);
    for (const placed of placements) expect(readFileSync(placed, "utf8")).toBe(code);
    expect(readdirSync(dirname(first))).toEqual(["component.cjs"]);
    expect(readdirSync(bundlesRoot)).toEqual([hash]);
    expect(readdirSync(`${bundlesRoot}.pending`)).toEqual([]);
  });

  it("never replaces a bundle file that is there: a runner linking it meanwhile must not find its inode unlinked", async () => {
    const root = tempRoot();
    const hash = "c".repeat(64);
    const first = await new BundleFiles(root).fileFor(hash, () => "first");
    const { ino } = statSync(first);
    // Another process (another BundleFiles) writing the same bundle keeps the file as it is.
    expect(await new BundleFiles(root).fileFor(hash, () => "second")).toBe(first);
    expect(statSync(first).ino).toBe(ino);
    expect(readFileSync(first, "utf8")).toBe("first");
  });

  it("writes a bundle once per process, at once for callers that ask together, then answers from memory", async () => {
    const root = tempRoot();
    const files = new BundleFiles(root);
    let built = 0;
    const hash = "b".repeat(64);
    const [file] = await Promise.all([files.fileFor(hash, () => (built++, "x")), files.fileFor(hash, () => (built++, "z"))]);
    expect(await files.fileFor(hash, () => (built++, "y"))).toBe(file);
    expect(built).toBe(1);
    expect(readFileSync(file, "utf8")).toBe("x");
  });
});
