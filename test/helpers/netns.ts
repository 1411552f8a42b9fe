/**
 * Test hosts of our own, in a network namespace the test makes itself: a
 * veth pair from this machine into the namespace, with one "public" address
 * (TEST-NET-2, 198.51.100.0/24, which the egress policy treats as the
 * internet) and one private address (10.213.0.0/16), and an HTTP server
 * inside answering on both. Nothing leaves this machine. Needs root and
 * iproute2 (test/setup/network-tools.ts installs it).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";

export interface NamespaceHost {
  /** An address the policy counts as public internet. */
  publicAddress: string;
  /** An address in a private range, refused unless RUNNEL_EGRESS_ALLOW opens it. */
  privateAddress: string;
  port: number;
  /** Requests the host received, as "METHOD /path". */
  received(): Promise<string[]>;
  close(): Promise<void>;
}

const HOST_SERVER = `
  const http = require("node:http");
  const seen = [];
  http.createServer((request, response) => {
    if (request.url === "/__seen") return response.end(JSON.stringify(seen));
    seen.push(request.method + " " + request.url);
    const url = new URL(request.url, "http://x");
    if (url.pathname === "/redirect") { response.writeHead(302, { location: url.searchParams.get("to") }); return response.end(); }
    response.end("hello from the test host");
  }).listen(Number(process.argv[1]), "0.0.0.0", () => console.log("ready"));
`;

function ip(...args: string[]): void {
  execFileSync("ip", args, { stdio: "pipe" });
}

/** Whether this machine can make test hosts (root with iproute2). */
export function canMakeNamespaces(): boolean {
  try {
    execFileSync("ip", ["netns", "list"], { stdio: "pipe" });
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
}

export async function startNamespaceHost(): Promise<NamespaceHost> {
  const tag = randomBytes(3).toString("hex");
  const namespace = `rnltest-${tag}`;
  const [outside, inside] = [`rv${tag}h`, `rv${tag}n`];
  // A /30 of each range, chosen at random, so that two runs at once do not share a route.
  const slot = randomInt(0, 64) * 4;
  const octet = randomInt(1, 255);
  const publicPair = [`198.51.100.${slot + 1}`, `198.51.100.${slot + 2}`] as const;
  const privatePair = [`10.213.${octet}.1`, `10.213.${octet}.2`] as const;
  const port = 8080;
  ip("netns", "add", namespace);
  let server: ChildProcess | undefined;
  const removeAll = () => {
    server?.kill("SIGKILL");
    try {
      ip("link", "del", outside);
    } catch {
      // Gone with the namespace already.
    }
    try {
      ip("netns", "del", namespace);
    } catch {
      // Already removed.
    }
  };
  try {
    ip("link", "add", outside, "type", "veth", "peer", "name", inside);
    ip("link", "set", inside, "netns", namespace);
    ip("addr", "add", `${publicPair[0]}/30`, "dev", outside);
    ip("addr", "add", `${privatePair[0]}/30`, "dev", outside);
    ip("link", "set", outside, "up");
    ip("netns", "exec", namespace, "ip", "addr", "add", `${publicPair[1]}/30`, "dev", inside);
    ip("netns", "exec", namespace, "ip", "addr", "add", `${privatePair[1]}/30`, "dev", inside);
    ip("netns", "exec", namespace, "ip", "link", "set", inside, "up");
    ip("netns", "exec", namespace, "ip", "link", "set", "lo", "up");
    server = spawn("ip", ["netns", "exec", namespace, process.execPath, "-e", HOST_SERVER, String(port)], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the test host did not start within 10 s")), 10_000);
      server!.stdout!.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
      server!.once("exit", (code) => reject(new Error(`the test host exited with ${code}`)));
    });
  } catch (error) {
    removeAll();
    throw error;
  }
  return {
    publicAddress: publicPair[1],
    privateAddress: privatePair[1],
    port,
    async received() {
      const response = await fetch(`http://${publicPair[1]}:${port}/__seen`);
      return (await response.json()) as string[];
    },
    async close() {
      removeAll();
    },
  };
}
