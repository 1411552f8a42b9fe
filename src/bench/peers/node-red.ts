import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startChildServer, type ChildServer } from "./child-server.js";

/**
 * Pinned, so that figures from different days compare: the 4.x line runs on
 * Node 18.5 and later (20 and 24 included); 5.x is newer than this comparison.
 */
export const NODE_RED_VERSION = "4.1.15";

const run = promisify(execFile);

/**
 * Where Node-RED lives: a cache folder outside the repository, so that it is
 * never a dependency of the project, is installed once per machine and
 * survives `npm ci` and new worktrees.
 */
export function nodeRedDir(): string {
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "runnel-bench", `node-red-${NODE_RED_VERSION}`);
}

/** red.js of the cached install, installing it on first use. */
export async function installNodeRed(dir = nodeRedDir()): Promise<string> {
  const redJs = join(dir, "node_modules", "node-red", "red.js");
  if (existsSync(redJs)) return redJs;
  // Installed beside the final folder and renamed at the end: an interrupted install is never taken for a finished one.
  const partial = `${dir}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  process.stderr.write(`Installing Node-RED ${NODE_RED_VERSION} into ${dir} (first use; about a minute)\n`);
  try {
    // cwd is the new folder, so the repository's own npm settings and package.json play no part.
    await run("npm", ["install", "--prefix", partial, `node-red@${NODE_RED_VERSION}`, "--no-audit", "--no-fund", "--omit=dev"], { cwd: partial, maxBuffer: 16 * 1024 * 1024 });
    await rm(dir, { recursive: true, force: true });
    await rename(partial, dir);
  } catch (error) {
    await rm(partial, { recursive: true, force: true });
    const failure = error as Error & { stderr?: string };
    // npm's first error lines name the cause (code, then the request that failed); the rest is a dump and a log path.
    const lines = (failure.stderr ?? "").split("\n").filter((line) => /^npm (error|ERR!) \S/.test(line));
    const message = lines.length > 0 ? lines.slice(0, 4).join("\n") : failure.message;
    throw new Error(`Node-RED could not be installed into ${dir}: ${message}\nThe peers bench needs the npm registry (or a finished install in that folder).`);
  }
  return redJs;
}

/** The flow: the shape of Runnel's bench workflow, three steps of which the last sets the answer. */
function benchFlow(path: string): unknown[] {
  const tab = "bench";
  // Node-RED takes a node without x and y for a config node, so each has a place on the canvas.
  const at = (column: number) => ({ z: tab, x: 100 + column * 150, y: 100 });
  const step = (id: string, column: number, func: string, next: string) => ({ id, type: "function", ...at(column), func, outputs: 1, wires: [[next]] });
  return [
    { id: tab, type: "tab", label: "bench" },
    { id: "trigger", type: "http in", ...at(0), url: path, method: "post", upload: false, wires: [["s0"]] },
    step("s0", 1, "return msg;", "s1"),
    step("s1", 2, "return msg;", "reply"),
    step("reply", 3, "msg.payload = { ok: true };\nreturn msg;", "respond"),
    { id: "respond", type: "http response", ...at(4), statusCode: "200", headers: {}, wires: [] },
  ];
}

/**
 * Settings for a quiet, closed instance: no editor or admin API (httpAdminRoot
 * false), errors only in its log, no credential key prompts, nothing fetched
 * or installed at run time.
 */
function settings(port: number): string {
  return `module.exports = ${JSON.stringify(
    {
      uiHost: "127.0.0.1",
      uiPort: port,
      flowFile: "flows.json",
      flowFilePretty: false,
      credentialSecret: false,
      httpAdminRoot: false,
      httpNodeRoot: "/",
      logging: { console: { level: "error", metrics: false, audit: false } },
      diagnostics: { enabled: false },
      runtimeState: { enabled: false },
      telemetry: { enabled: false },
      functionExternalModules: false,
      externalModules: { autoInstall: false, palette: { allowInstall: false }, modules: { allowInstall: false } },
    },
    null,
    2,
  )};\n`;
}

/** Node-RED on `port` in a child process, running the bench flow at POST /bench; stop() also removes its user folder. */
export async function startNodeRed(redJs: string, port: number, body: string): Promise<ChildServer> {
  const userDir = await mkdtemp(join(tmpdir(), "runnel-bench-node-red-"));
  await writeFile(join(userDir, "flows.json"), JSON.stringify(benchFlow("/bench")));
  await writeFile(join(userDir, "settings.js"), settings(port));
  const args = [redJs, "--settings", join(userDir, "settings.js"), "--userDir", userDir, "--port", String(port)];
  try {
    const child = await startChildServer(`Node-RED ${NODE_RED_VERSION}`, args, `http://127.0.0.1:${port}/bench`, body);
    return {
      url: child.url,
      pid: child.pid,
      async stop() {
        await child.stop();
        await rm(userDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(userDir, { recursive: true, force: true });
    throw error;
  }
}
