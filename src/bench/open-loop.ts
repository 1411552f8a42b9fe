/**
 * An open-loop load: requests sent at an even rate, whether or not earlier
 * ones have been answered, as independent callers would. autocannon's fixed
 * rate (-R) fires every connection at once on each tick, so its latency at a
 * rate measures bursts of `connections` requests; this measures a steady
 * stream. Runs as its own process (see openLoop below): `node open-loop.js <url> <rate> <seconds> <body>`;
 * `<url>` may be `@<file>`, a JSON list of URLs that the requests go to in turn.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import type { LoadFigures } from "./autocannon.js";
import { promisify } from "node:util";

/** The same figures as autocannon's. */
export type OpenLoopFigures = LoadFigures;

const run = promisify(execFile);

/** Drives `url` (or each of `url` in turn) at `rate` requests per second in all for `seconds`, from a child process. */
export async function openLoop(url: string | readonly string[], options: { rate: number; seconds: number; body: string }): Promise<OpenLoopFigures> {
  let listDir: string | undefined;
  let target = typeof url === "string" ? url : "";
  if (typeof url !== "string") {
    listDir = mkdtempSync(join(tmpdir(), "runnel-open-loop-"));
    writeFileSync(join(listDir, "urls.json"), JSON.stringify(url));
    target = `@${join(listDir, "urls.json")}`;
  }
  try {
    const { stdout } = await run(process.execPath, [fileURLToPath(import.meta.url), target, String(options.rate), String(options.seconds), options.body], { maxBuffer: 1 << 20 });
    return JSON.parse(stdout) as OpenLoopFigures;
  } finally {
    if (listDir) rmSync(listDir, { recursive: true, force: true });
  }
}

async function main(url: string, rate: number, seconds: number, body: string): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const targets = (url.startsWith("@") ? (JSON.parse(readFileSync(url.slice(1), "utf8")) as string[]) : [url]).map((each) => new URL(each));
  let turn = 0;
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const pending = new Set<Promise<void>>();
  const send = (): Promise<void> =>
    new Promise((resolve) => {
      const started = performance.now();
      const target = targets[turn++ % targets.length]!;
      const req = request(
        { agent, host: target.hostname, port: target.port, path: target.pathname, method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on("end", () => {
            latencies.push(performance.now() - started);
            if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode > 299) non2xx += 1;
            resolve();
          });
        },
      );
      req.on("error", () => {
        errors += 1;
        resolve();
      });
      req.end(body);
    });
  const total = Math.round(rate * seconds);
  const begin = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - begin) / 1000) * rate) + 1);
    while (sent < due) {
      const done = send();
      pending.add(done);
      void done.then(() => pending.delete(done));
      sent += 1;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
  const elapsed = (performance.now() - begin) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  process.stdout.write(JSON.stringify({ perSecond: latencies.length / elapsed, p50Ms: at(0.5), p99Ms: at(0.99), errors, non2xx }));
  agent.destroy();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [url, rate, seconds, body] = process.argv.slice(2);
  void main(url!, Number(rate), Number(seconds), body ?? "{}");
}
