import { afterAll, beforeAll, it } from "vitest";
import { respondingRunBody, runBody, startHostileHarness, type HostileHarness } from "./harness.js";

let h: HostileHarness;
beforeAll(async () => { h = await startHostileHarness(); });
afterAll(() => h.close());

const PROBE = respondingRunBody(`
  const fs = require("node:fs");
  const t = (fn) => { try { const v = fn(); return typeof v === "string" ? v.slice(0, 300) : v === undefined ? "undefined" : JSON.stringify(v).slice(0,300); } catch (e) { return "ERR " + (e.code || "") + " " + e.message.slice(0, 200); } };
  const target = event.body.path;
  const out = {
    env: Object.keys(process.env), pid: process.pid, ppid: process.ppid,
    selfEnv: t(() => fs.readFileSync("/proc/self/environ", "utf8")),
    oneEnv: t(() => fs.readFileSync("/proc/1/environ", "utf8")),
    ppidEnv: t(() => fs.readFileSync("/proc/" + process.ppid + "/environ", "utf8")),
    serverEnv: t(() => fs.readFileSync("/proc/" + event.body.serverPid + "/environ", "utf8")),
    passwd: t(() => fs.readFileSync("/etc/passwd", "utf8")),
    lsProc: t(() => fs.readdirSync("/proc")),
    lsRoot: t(() => fs.readdirSync("/")),
    target: target ? t(() => fs.readFileSync(target, "utf8")) : null,
    write: t(() => fs.writeFileSync("/tmp/x", "y")),
    writeOwn: t(() => fs.writeFileSync(__dirname + "/x", "y")),
    symlink: t(() => fs.symlinkSync("/etc/passwd", "/tmp/link")),
    cwd: t(() => process.cwd()), dirname: __dirname,
    spawn: t(() => require("child_process").spawnSync("/bin/sh", ["-c", "id"]).stdout?.toString()),
    fork: t(() => require("child_process").fork(__filename)),
    worker: t(() => new (require("worker_threads").Worker)("1", { eval: true })),
    dlopen: t(() => process.dlopen({ exports: {} }, "/usr/lib/x86_64-linux-gnu/libc.so.6")),
    inspectorOpen: t(() => require("inspector").open(9229)),
    debugProcess: t(() => process._debugProcess(process.pid)),
    debugServer: t(() => process._debugProcess(event.body.serverPid)),
    killServer: t(() => process.kill(event.body.serverPid, "SIGTERM")),
    kill1: t(() => process.kill(1, 0)),
    rawKill: t(() => process._kill(1, 0)),
    binding: t(() => typeof process.binding("spawn_sync")),
    channel: typeof process.send, 
  };
  this.http.respond({ status: 200, body: out });
`);

it("probes", async () => {
  const s = await h.deploySource(PROBE);
  const a = await h.fire(s, { json: { serverPid: process.pid, path: h.server.dataDir + "/admin-api-key" } });
  console.log(process.pid, JSON.stringify(a, null, 1));
  for (const [label, body] of [["loop", "while(true){}"], ["oom", "const hog=[]; while(true) hog.push(new Array(1e6).fill(Math.random()));"], ["exit", "process.exit(3)"], ["reallyExit", "process.reallyExit(4)"], ["abort", "process.abort()"], ["emit", "const big='x'.repeat(1024*1024); for (let i=0;i<40;i++) this.$emit({big});"], ["log", "const line='x'.repeat(1024); for (let i=0;i<20000;i++) console.log(line);"], ["late", "setTimeout(() => { throw new Error('late') }, 100);"]]) {
    const src = await h.deploySource(runBody(body), { timeout_seconds: 1 });
    const { outcome, bystander } = await h.whileAttacking(() => h.fire(src));
    console.log(label, JSON.stringify(outcome), bystander.length, bystander.filter(b => b.status !== 200).length);
    await new Promise(r => setTimeout(r, 300));
    console.log(label, "logs", JSON.stringify((await h.logsOf(src)).map(l => l.slice(0, 200))));
    console.log(label, "next", JSON.stringify(await h.fire(src)));
  }
});
