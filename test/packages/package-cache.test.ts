import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { c as createTar } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PackageCache } from "../../src/components/packages/package-cache.js";

describe("the package cache", () => {
  let scratch: string;
  let tarball: Buffer;
  let integrity: string;

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "runnel-cache-"));
    const folder = join(scratch, "src", "package");
    await mkdir(join(folder, "lib"), { recursive: true });
    await writeFile(join(folder, "package.json"), JSON.stringify({ name: "@s/linky", version: "1.0.0" }));
    await writeFile(join(folder, "lib", "index.js"), "module.exports = 1;", { mode: 0o200 });
    await symlink("/etc/hostname", join(folder, "lib", "hostname.js"));
    const chunks: Buffer[] = [];
    for await (const chunk of createTar({ gzip: true, cwd: join(scratch, "src") }, ["package"])) chunks.push(Buffer.from(chunk as Uint8Array));
    tarball = Buffer.concat(chunks);
    integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
  });
  afterAll(() => rm(scratch, { recursive: true, force: true }));

  it("unpacks files once into a folder named by integrity, readable, without links", async () => {
    let downloads = 0;
    const root = join(scratch, "cache-1");
    const cache = new PackageCache({ root, download: async () => (downloads++, tarball) });
    const entry = { integrity, tarball: "http://registry.test/linky.tgz", dependencies: {} };
    const folders = await Promise.all([1, 2, 3].map(() => cache.install("@s/linky@1.0.0", entry)));
    expect(new Set(folders).size).toBe(1);
    expect(downloads).toBe(1);
    const installed = join(folders[0]!, "node_modules", "@s", "linky");
    expect(await readFile(join(installed, "lib", "index.js"), "utf8")).toBe("module.exports = 1;");
    expect(existsSync(join(installed, "lib", "hostname.js"))).toBe(false);
    expect(await readdir(root)).toEqual([folders[0]!.split("/").pop()]);

    const again = new PackageCache({ root, download: async () => (downloads++, tarball) });
    expect(await again.install("@s/linky@1.0.0", entry)).toBe(folders[0]);
    expect(downloads).toBe(1);
  });

  it("leaves nothing behind when a download fails, and tries again next time", async () => {
    const root = join(scratch, "cache-2");
    let fail = true;
    const cache = new PackageCache({ root, download: async () => { if (fail) throw new Error("registry down"); return tarball; } });
    const entry = { integrity, tarball: "http://registry.test/linky.tgz", dependencies: {} };
    await expect(cache.install("@s/linky@1.0.0", entry)).rejects.toThrow("registry down");
    expect(await readdir(root)).toEqual([]);
    fail = false;
    expect(existsSync(join(await cache.install("@s/linky@1.0.0", entry), "node_modules", "@s", "linky", "package.json"))).toBe(true);
  });
});
