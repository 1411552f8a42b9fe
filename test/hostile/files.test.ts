import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectBystanderServed, hostileSource, startHostileHarness, type HostileHarness } from "./harness.js";

/**
 * Files: a runner may read its own bundle's folder and nothing else, and may
 * write nowhere (Node's permission model, with bubblewrap's read-only view
 * under it where it works). The paths attacked are real: the server's data
 * folder (SQLite file, admin key, master key), the bystander's bundle, /etc,
 * the server's /proc entries.
 */

/** Runs each attempt of `attempts` (name → JS expression using fs and the event's paths) and answers what each did. */
function probe(attempts: Record<string, string>): string {
  const lines = Object.entries(attempts).map(([name, expression]) => `      out[${JSON.stringify(name)}] = await attempt(async () => ${expression});`);
  return hostileSource(`
      const fs = require("node:fs");
      const p = event.body;
      const attempt = async (fn) => { try { const value = await fn(); return { allowed: typeof value === "string" ? value.slice(0, 200) : String(value) }; } catch (error) { return { denied: error.code || error.message }; } };
      const out = {};
${lines.join("\n")}
      this.http.respond({ status: 200, body: out });`);
}

let h: HostileHarness;
/** Paths the attacker aims at, sent in the request's body (the attacker could guess them: they are in its runner's argv). */
let paths: Record<string, string>;
let bystanderBundle: string;
const fingerprint = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

beforeAll(async () => {
  h = await startHostileHarness();
  const bundles = join(h.server.dataDir, "bundles");
  const folder = readdirSync(bundles).find((hash) => readFileSync(join(bundles, hash, "component.cjs"), "utf8").includes('name: "Bystander"'));
  if (!folder) throw new Error("the bystander's bundle was not found under the data folder");
  bystanderBundle = join(bundles, folder, "component.cjs");
  const data = h.server.dataDir;
  paths = {
    data,
    sqlite: join(data, "runnel.sqlite"),
    adminKey: join(data, "admin-api-key"),
    masterKey: join(data, "master-key"),
    bystander: bystanderBundle,
    bystanderFolder: join(bundles, folder),
    serverPid: String(process.pid),
  };
  for (const file of ["sqlite", "adminKey", "masterKey"]) if (!existsSync(paths[file]!)) throw new Error(`expected ${paths[file]} to exist`);
});
afterAll(() => h?.close());

describe("a component reaching for files that are not its own", () => {
  it("reads its own bundle, and nothing of the server, the bystander, /etc or /proc", async () => {
    const source = await h.deploySource(
      probe({
        own: `fs.readFileSync(__filename, "utf8").includes("event.query.attack")`,
        passwd: `fs.readFileSync("/etc/passwd", "utf8")`,
        shadow: `fs.readFileSync("/etc/shadow", "utf8")`,
        sqlite: `fs.readFileSync(p.sqlite, "latin1")`,
        adminKey: `fs.readFileSync(p.adminKey, "utf8")`,
        masterKey: `fs.readFileSync(p.masterKey, "utf8")`,
        relativeAdminKey: `fs.readFileSync("../../admin-api-key", "utf8")`,
        dataFolder: `fs.readdirSync(p.data).join(",")`,
        bundles: `fs.readdirSync(require("node:path").dirname(p.bystanderFolder)).join(",")`,
        bystander: `fs.readFileSync(p.bystander, "utf8")`,
        bystanderRequire: `JSON.stringify(require(p.bystander))`,
        bystanderStream: `new Promise((resolve, reject) => fs.createReadStream(p.bystander).on("error", reject).on("data", (d) => resolve(String(d))))`,
        bystanderPromises: `fs.promises.readFile(p.bystander, "utf8")`,
        serverCmdline: `fs.readFileSync("/proc/" + p.serverPid + "/cmdline", "utf8")`,
        serverFds: `fs.readdirSync("/proc/" + p.serverPid + "/fd").join(",")`,
        serverRootAdminKey: `fs.readFileSync("/proc/" + p.serverPid + "/root" + p.adminKey, "utf8")`,
        viaOwnCwd: `fs.readFileSync("/proc/self/cwd/../../admin-api-key", "utf8")`,
        procSelfMaps: `fs.readFileSync("/proc/self/maps", "utf8")`,
        fsBinding: `typeof process.binding("fs")`,
      }),
    );
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source, { query: "?attack", json: paths }));
    expect(outcome.status).toBe(200);
    const { own, ...others } = outcome.body;
    // The probe works: it reads what it may.
    expect(own).toEqual({ allowed: "true" });
    const { bystanderRequire, ...read } = others;
    for (const [name, result] of Object.entries(read)) expect(result, name).toEqual({ denied: "ERR_ACCESS_DENIED" });
    // The module loader looks the file up without permission to see it: to require it is not to find it.
    expect(bystanderRequire).toEqual({ denied: "MODULE_NOT_FOUND" });
    expect(JSON.stringify(outcome.body)).not.toContain(h.server.adminKey);
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("writes nowhere: not its own folder, /tmp, the data folder or the bystander's bundle", async () => {
    const before = fingerprint(bystanderBundle);
    const source = await h.deploySource(
      probe({
        ownFolder: `fs.writeFileSync(__dirname + "/dropped.js", "x")`,
        tmp: `fs.writeFileSync("/tmp/dropped", "x")`,
        dataFolder: `fs.writeFileSync(p.data + "/dropped", "x")`,
        bystander: `fs.writeFileSync(p.bystander, "module.exports = { name: 'pwned' }")`,
        bystanderAppend: `fs.appendFileSync(p.bystander, "\\nthrow 1")`,
        bystanderDelete: `fs.rmSync(p.bystanderFolder, { recursive: true, force: true })`,
        bystanderRename: `fs.renameSync(p.bystander, p.bystander + ".gone")`,
        bystanderChmod: `fs.chmodSync(p.bystander, 0o777)`,
        sqliteTruncate: `fs.truncateSync(p.sqlite, 0)`,
        sqliteOpen: `fs.openSync(p.sqlite, "r+")`,
        adminKey: `fs.writeFileSync(p.adminKey, "rnl_attacker")`,
        mkdir: `fs.mkdirSync(p.data + "/attacker", { recursive: true })`,
        copy: `fs.copyFileSync(__filename, p.data + "/copied.js")`,
        promises: `fs.promises.writeFile(p.data + "/async", "x")`,
      }),
    );
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source, { query: "?attack", json: paths }));
    expect(outcome.status).toBe(200);
    for (const [name, result] of Object.entries(outcome.body)) expect(result, name).toEqual({ denied: "ERR_ACCESS_DENIED" });
    expect(fingerprint(bystanderBundle)).toBe(before);
    expect(readFileSync(paths.adminKey!, "utf8").trim()).toBe(h.server.adminKey);
    for (const dropped of ["dropped", "attacker", "copied.js", "async"]) expect(existsSync(join(paths.data!, dropped)), dropped).toBe(false);
    // The database file may have changed (the bystander's events), never been emptied.
    expect(readFileSync(paths.sqlite!).length).toBeGreaterThan(0);
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });

  it("cannot make links that lead out of its folder", async () => {
    const source = await h.deploySource(
      probe({
        symlinkHere: `fs.symlinkSync(p.adminKey, __dirname + "/key-link")`,
        symlinkFolder: `fs.symlinkSync(p.data, __dirname + "/data-link")`,
        hardLink: `fs.linkSync(p.adminKey, __dirname + "/key-hard")`,
        symlinkTmp: `fs.symlinkSync("/", "/tmp/root-link")`,
        readlinkProc: `fs.readlinkSync("/proc/self/cwd")`,
      }),
    );
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(source, { query: "?attack", json: paths }));
    expect(outcome.status).toBe(200);
    for (const [name, result] of Object.entries(outcome.body)) expect(result, name).toEqual({ denied: "ERR_ACCESS_DENIED" });
    // In its own folder, where it may read, the link it tried is not there.
    const followed = await h.deploySource(probe({ readThroughLink: `fs.readFileSync(__dirname + "/key-link", "utf8")` }));
    expect((await h.fire(followed, { query: "?attack", json: paths })).body).toEqual({ readThroughLink: { denied: "ENOENT" } });
    const bundleFolders = readdirSync(join(h.server.dataDir, "bundles"));
    for (const folder of bundleFolders) {
      for (const link of ["key-link", "data-link", "key-hard"]) expect(existsSync(join(h.server.dataDir, "bundles", folder, link)), `${folder}/${link}`).toBe(false);
    }
    expectBystanderServed(bystander);
    await h.expectOwnerRecovers(source);
  });
});
