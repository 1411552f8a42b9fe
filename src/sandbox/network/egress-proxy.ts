/**
 * The only way out of a runner's network namespace: a proxy on a Unix
 * socket that the host listens on and bubblewrap binds into the sandbox.
 * A runner has no network interface but loopback, so whatever user code
 * does, its connections either come through here or go nowhere; the shim
 * in the runner (runner/network-shim.ts) only routes sockets here.
 *
 * Per connection, the runner sends one line of JSON and the proxy answers
 * one line before anything else:
 *   → {"connect":{"host":"api.example.com","port":443}}
 *   ← {"ok":true,"address":"93.184.215.14","family":4,"port":443}   then raw bytes both ways
 *   ← {"ok":false,"code":"EACCES","message":"…"}                     then the connection closes
 *   → {"lookup":{"host":"api.example.com"}}
 *   ← {"ok":true,"addresses":[{"address":"…","family":4}]}           then the connection closes
 * The proxy resolves names itself and checks every address it connects to
 * against the policy, so DNS rebinding and redirects gain nothing.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { chmod, mkdir, rm } from "node:fs/promises";
import { createConnection, createServer, isIP, type Server, type Socket } from "node:net";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { egressDeniedMessage, type EgressPolicy } from "../../domain/egress-policy.js";

export type Lookup = (hostname: string) => Promise<LookupAddress[]>;

export interface EgressProxyOptions {
  policy: EgressPolicy;
  socketPath: string;
  logger?: Logger | undefined;
  /** Name resolution; default: the system resolver (dns.lookup, as node itself connects). */
  lookup?: Lookup;
  /** How long one upstream connection attempt may take. Default 10 s. */
  connectTimeoutMs?: number;
  /** Connections open at once through the proxy, all runners together. Default 2,048. */
  maxConnections?: number;
}

/** A request line longer than this is not one the shim sends. */
const MAX_REQUEST_BYTES = 2048;
/** A runner that connects and says nothing is dropped after this long. */
const REQUEST_TIMEOUT_MS = 10_000;

type ProxyRequest = { connect: { host: string; port: number } } | { lookup: { host: string } };
type Reply = Record<string, unknown> & { ok: boolean };

function systemLookup(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))));
}

function readRequest(line: string): ProxyRequest | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const request = parsed as Record<string, Record<string, unknown> | undefined>;
  const validHost = (host: unknown): host is string => typeof host === "string" && host.length > 0 && host.length <= 253;
  if (request.connect && validHost(request.connect.host)) {
    const port = request.connect.port;
    if (typeof port === "number" && Number.isInteger(port) && port > 0 && port < 65_536) return { connect: { host: request.connect.host, port } };
    return null;
  }
  if (request.lookup && validHost(request.lookup.host)) return { lookup: { host: request.lookup.host } };
  return null;
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "ECONNREFUSED";
}

export class EgressProxy {
  private readonly options: EgressProxyOptions;
  private readonly server: Server;
  private readonly lookup: Lookup;
  private readonly open = new Set<Socket>();

  constructor(options: EgressProxyOptions) {
    this.options = options;
    this.lookup = options.lookup ?? systemLookup;
    // Half-open: a runner may send its request and close its side at once (a look-up); the answer must still reach it.
    this.server = createServer({ allowHalfOpen: true }, (client) => this.accept(client));
    this.server.on("error", (error) => options.logger?.warn({ err: error }, "egress proxy: server error"));
  }

  get socketPath(): string {
    return this.options.socketPath;
  }

  /** Listens on the socket path (a stale file from an earlier run is replaced), readable by this user only. */
  async start(): Promise<void> {
    const path = this.options.socketPath;
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await rm(path, { force: true });
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(path, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    await chmod(path, 0o600);
  }

  /** Stops listening and cuts every connection still open. */
  async close(): Promise<void> {
    for (const socket of this.open) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.options.socketPath, { force: true });
  }

  private track(socket: Socket): void {
    this.open.add(socket);
    socket.once("close", () => this.open.delete(socket));
  }

  private accept(client: Socket): void {
    this.track(client);
    client.on("error", () => client.destroy());
    if (this.open.size > (this.options.maxConnections ?? 2048)) {
      client.end(`${JSON.stringify({ ok: false, code: "EMFILE", message: "Too many connections are open through the sandbox's network proxy; try again when some have closed." })}\n`);
      return;
    }
    let buffered: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => client.destroy(), REQUEST_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
      const newline = buffered.indexOf(10);
      if (newline < 0) {
        if (buffered.length > MAX_REQUEST_BYTES) client.destroy();
        return;
      }
      clearTimeout(timer);
      client.off("data", onData);
      client.pause();
      const request = readRequest(buffered.subarray(0, newline).toString("utf8"));
      const rest = buffered.subarray(newline + 1);
      if (!request) return void client.destroy();
      if ("lookup" in request) void this.answerLookup(client, request.lookup.host);
      else void this.connect(client, request.connect.host, request.connect.port, rest);
    };
    client.on("data", onData);
  }

  private reply(client: Socket, reply: Reply, end: boolean): void {
    const line = `${JSON.stringify(reply)}\n`;
    if (end) client.end(line);
    else client.write(line);
  }

  /** The addresses of `host` that the policy lets user code reach, or the reply that says why there are none. */
  private async allowedAddresses(host: string, port: number | null): Promise<{ addresses: LookupAddress[] } | { refusal: Reply }> {
    const target = port === null ? host : `${host.includes(":") ? `[${host}]` : host}:${port}`;
    let resolved: LookupAddress[];
    if (isIP(host) !== 0) resolved = [{ address: host, family: isIP(host) }];
    else {
      try {
        resolved = await this.lookup(host);
      } catch (error) {
        return { refusal: { ok: false, code: errorCode(error) === "ENOTFOUND" ? "ENOTFOUND" : "EAI_AGAIN", message: `getaddrinfo ${errorCode(error)} ${host}` } };
      }
    }
    const hostname = isIP(host) === 0 ? host : undefined;
    const addresses: LookupAddress[] = [];
    let reason = "";
    for (const candidate of resolved) {
      const verdict = this.options.policy.check(candidate.address, hostname);
      if (verdict.allowed) addresses.push(candidate);
      else reason ||= verdict.reason;
    }
    if (addresses.length > 0) return { addresses };
    this.options.logger?.info({ target }, "egress proxy: a connection from user code was refused by the network policy");
    return { refusal: { ok: false, code: "EACCES", message: egressDeniedMessage(port === null ? `${host} (it resolves only to addresses user code may not reach)` : target, reason) } };
  }

  private async answerLookup(client: Socket, host: string): Promise<void> {
    const found = await this.allowedAddresses(host, null);
    if ("refusal" in found) return this.reply(client, found.refusal, true);
    this.reply(client, { ok: true, addresses: found.addresses.map(({ address, family }) => ({ address, family })) }, true);
  }

  private async connect(client: Socket, host: string, port: number, rest: Buffer): Promise<void> {
    const found = await this.allowedAddresses(host, port);
    if ("refusal" in found) return this.reply(client, found.refusal, true);
    let lastError: unknown;
    for (const candidate of found.addresses) {
      if (client.destroyed) return;
      try {
        const upstream = await this.dial(candidate.address, port);
        if (client.destroyed) return void upstream.destroy();
        this.reply(client, { ok: true, address: candidate.address, family: candidate.family, port }, false);
        if (rest.length > 0) upstream.write(rest);
        upstream.on("error", () => client.destroy());
        client.on("close", () => upstream.destroy());
        upstream.on("close", () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        return;
      } catch (error) {
        lastError = error;
      }
    }
    const code = errorCode(lastError);
    this.reply(client, { ok: false, code, message: `connect ${code} ${host}:${port}${lastError instanceof Error ? ` (${lastError.message})` : ""}` }, true);
  }

  /** One attempt at one address; the address is a literal, so nothing is looked up again between the check and the connect. */
  private dial(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const upstream = createConnection({ host: address, port });
      this.track(upstream);
      const timer = setTimeout(() => {
        upstream.destroy();
        reject(Object.assign(new Error(`no answer within ${this.options.connectTimeoutMs ?? 10_000} ms`), { code: "ETIMEDOUT" }));
      }, this.options.connectTimeoutMs ?? 10_000);
      const onError = (error: Error): void => {
        clearTimeout(timer);
        reject(error);
      };
      upstream.once("error", onError);
      upstream.once("connect", () => {
        clearTimeout(timer);
        upstream.off("error", onError);
        // Never without a listener: an 'error' with none would be thrown in the server.
        upstream.on("error", () => upstream.destroy());
        upstream.setNoDelay(true);
        resolve(upstream);
      });
    });
  }
}
