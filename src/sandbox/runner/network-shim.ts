/**
 * Routes user code's TCP connections and name look-ups through the host's
 * egress proxy (sandbox/network/egress-proxy.ts), so that components keep
 * using net, tls, http, https, fetch and database drivers unchanged.
 *
 * This shim enforces nothing. Under bubblewrap the runner lives in a
 * network namespace whose only interface is loopback: code that gets
 * around the shim reaches nothing at all. The proxy, outside the runner,
 * decides which address may be reached; this file only speaks to it.
 *
 * UDP and `dns.resolve*` (which speak to a name server directly) have no
 * way out; `dns.lookup` is answered by the proxy.
 */
import { createRequire } from "node:module";
import type * as DnsModule from "node:dns";
import type * as NetModule from "node:net";
import { Duplex } from "node:stream";
import type * as TlsModule from "node:tls";
import { promisify } from "node:util";

// Built-in modules are shared objects: patched here, patched for every require of them.
const builtin = createRequire("/");
const net = builtin("node:net") as typeof NetModule;
const tls = builtin("node:tls") as typeof TlsModule;
const dns = builtin("node:dns") as typeof DnsModule;

type Callback = (...args: unknown[]) => void;
type ConnectOptions = Record<string, unknown>;
type Internals = { _normalizeArgs(args: unknown[]): [ConnectOptions, Callback | null] };
type Reply = { ok: boolean; code?: string; message?: string; address?: string; family?: number; port?: number; addresses?: Array<{ address: string; family: number }> };

/** The proxy's answer line is short; more without a newline is not the proxy. */
const MAX_REPLY_BYTES = 64 * 1024;

function connectionError(code: string, message: string, host: string, port?: number): Error {
  return Object.assign(new Error(message), { code, errno: code, syscall: port === undefined ? "getaddrinfo" : "connect", hostname: host, address: host, ...(port === undefined ? {} : { port }) });
}

/**
 * Makes `socket`, about to connect to the proxy, look to user code like a
 * socket connected to host:port. Two of net's own steps are taken over on
 * this one socket: `emit`, to hold 'connect' (and 'ready') until the proxy
 * has reached the host, so that a refused or failed connection is an error
 * instead of a connect, and to send the request first once the pipe is
 * open; and `push`, where net hands read data to the stream, to take the
 * proxy's answer off the front before user code sees any of it.
 */
function speakToProxy(socket: NetModule.Socket, host: string, port: number): void {
  type Hooked = NetModule.Socket & {
    push: (chunk: unknown, encoding?: BufferEncoding) => boolean;
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
    _writeGeneric(writev: boolean, data: string, encoding: string, callback: () => void): void;
    _handle: { reading?: boolean; readStart(): number } | null;
  };
  const own = socket as Hooked;
  const { push, emit } = own;
  const held: Array<[string | symbol, unknown[]]> = [];
  let requested = false;
  let pending: Buffer = Buffer.alloc(0);
  const unhook = (): void => {
    delete (own as { push?: unknown }).push;
    delete (own as { emit?: unknown }).emit;
  };
  const fail = (code: string, message: string): boolean => {
    unhook();
    socket.destroy(connectionError(code, message, host, port));
    return false;
  };

  own.emit = function (event: string | symbol, ...args: unknown[]): boolean {
    if (event !== "connect" && event !== "ready") return emit.call(this, event, ...args);
    if (!requested) {
      requested = true;
      // Straight to the pipe, ahead of what user code wrote meanwhile (net sends that once 'connect' is emitted, below).
      own._writeGeneric(false, `${JSON.stringify({ connect: { host, port } })}\n`, "utf8", () => {});
      // A read asked for while connecting waits for 'connect', which is held: start reading here, as net would, to hear the answer.
      const handle = own._handle;
      if (handle && !handle.reading) {
        handle.reading = true;
        const status = handle.readStart();
        if (status < 0) fail("ECONNRESET", `connect ECONNRESET ${host}:${port}: the sandbox's network proxy could not be read.`);
      }
    }
    held.push([event, args]);
    return true;
  };

  own.push = function (chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return fail("ECONNRESET", `connect ECONNRESET ${host}:${port}: the sandbox's network proxy closed the connection before answering.`);
    pending = Buffer.concat([pending, Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), encoding)]);
    const newline = pending.indexOf(10);
    if (newline < 0) return pending.length > MAX_REPLY_BYTES ? fail("EPROTO", "The sandbox's network proxy sent an answer that could not be read.") : true;
    let reply: Reply;
    try {
      reply = JSON.parse(pending.subarray(0, newline).toString("utf8")) as Reply;
    } catch {
      return fail("EPROTO", "The sandbox's network proxy sent an answer that could not be read.");
    }
    if (!reply.ok) return fail(reply.code ?? "ECONNREFUSED", reply.message ?? `connect ECONNREFUSED ${host}:${port}`);
    unhook();
    // The peer as the proxy reached it: a pipe has no peer name of its own.
    Object.defineProperties(socket, {
      remoteAddress: { value: reply.address, configurable: true },
      remotePort: { value: reply.port, configurable: true },
      remoteFamily: { value: reply.family === 6 ? "IPv6" : "IPv4", configurable: true },
    });
    for (const [event, args] of held) socket.emit(event, ...args);
    const rest = pending.subarray(newline + 1);
    return rest.length > 0 ? push.call(this, rest) : true;
  };
}

/**
 * TLS reads a native socket below JavaScript, where the proxy's answer
 * could not be taken off; over this stream it reads in JavaScript, after
 * the answer is gone.
 */
class RelayStream extends Duplex {
  constructor(private readonly raw: NetModule.Socket) {
    super();
    raw.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) raw.pause();
    });
    raw.on("end", () => this.push(null));
    raw.on("error", (error) => this.destroy(error));
    raw.on("close", () => {
      if (!this.destroyed) this.destroy();
    });
  }

  override _read(): void {
    this.raw.resume();
  }

  override _write(chunk: Buffer, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.raw.write(chunk, encoding, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.raw.end(callback);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.raw.destroy();
    callback(error);
  }
}

function lookupThroughProxy(proxyPath: string, host: string): Promise<Array<{ address: string; family: number }>> {
  return new Promise((resolve, reject) => {
    const socket = new net.Socket();
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (text.length > MAX_REPLY_BYTES) socket.destroy(connectionError("EPROTO", "The sandbox's network proxy sent an answer that could not be read.", host));
    });
    socket.on("error", (error) => reject(error));
    socket.on("end", () => {
      try {
        const reply = JSON.parse(text) as Reply;
        if (reply.ok && Array.isArray(reply.addresses)) resolve(reply.addresses);
        else reject(connectionError(reply.code ?? "ENOTFOUND", reply.message ?? `getaddrinfo ENOTFOUND ${host}`, host));
      } catch {
        reject(connectionError("EPROTO", "The sandbox's network proxy sent an answer that could not be read.", host));
      }
    });
    originalSocketConnect.call(socket, { path: proxyPath }, () => socket.end(`${JSON.stringify({ lookup: { host } })}\n`));
  });
}

const originalSocketConnect = net.Socket.prototype.connect as (this: NetModule.Socket, ...args: unknown[]) => NetModule.Socket;

export function installNetworkShim(proxyPath: string): void {
  const normalizeArgs = (net as unknown as Internals)._normalizeArgs;
  const originalTlsConnect = tls.connect as (...args: unknown[]) => TlsModule.TLSSocket;
  const originalLookup = dns.lookup as (...args: unknown[]) => void;

  net.Socket.prototype.connect = function (this: NetModule.Socket, ...args: unknown[]): NetModule.Socket {
    // net.connect() hands its arguments on already normalized, as a one-element list.
    const normalized = args.length >= 1 && Array.isArray(args[0]) ? (args[0] as [ConnectOptions, Callback | null]) : normalizeArgs(args);
    const [options, callback] = normalized;
    const port = Number(options.port);
    const isTcp = !options.path && options.port !== undefined && Number.isInteger(port) && port > 0 && port < 65_536;
    // A TLS socket made without a stream below it (new tls.TLSSocket().connect()) cannot be routed: it goes nowhere.
    if (!isTcp || this instanceof tls.TLSSocket) return originalSocketConnect.apply(this, args);
    const host = typeof options.host === "string" && options.host !== "" ? options.host : "localhost";
    speakToProxy(this, host, port);
    if (callback) originalSocketConnect.call(this, { path: proxyPath }, callback);
    else originalSocketConnect.call(this, { path: proxyPath });
    return this;
  } as typeof net.Socket.prototype.connect;

  tls.connect = function (...args: unknown[]): TlsModule.TLSSocket {
    const callback = typeof args[args.length - 1] === "function" ? (args[args.length - 1] as Callback) : undefined;
    const rest = callback ? args.slice(0, -1) : args;
    let options: ConnectOptions;
    if (typeof rest[0] === "object" && rest[0] !== null) options = { ...(rest[0] as ConnectOptions) };
    else {
      const extra = rest.find((arg, index) => index > 0 && typeof arg === "object" && arg !== null) as ConnectOptions | undefined;
      options = { ...extra, port: rest[0] };
      if (typeof rest[1] === "string") options.host = rest[1];
    }
    if (options.socket || options.path || options.port === undefined) return originalTlsConnect.apply(tls, args);
    const host = typeof options.host === "string" && options.host !== "" ? options.host : "localhost";
    const raw = net.connect({ host, port: Number(options.port) });
    const servername = typeof options.servername === "string" ? options.servername : net.isIP(host) === 0 ? host : undefined;
    const secure = { ...options, host, socket: new RelayStream(raw), ...(servername === undefined ? {} : { servername }) };
    return callback ? originalTlsConnect.call(tls, secure, callback) : originalTlsConnect.call(tls, secure);
  } as typeof tls.connect;

  const lookup = function (hostname: unknown, options: unknown, callback?: unknown): void {
    const done = (typeof options === "function" ? options : callback) as Callback;
    const settings = (typeof options === "number" ? { family: options } : typeof options === "object" && options !== null ? options : {}) as { family?: number | string; all?: boolean };
    if (typeof hostname !== "string" || hostname === "" || net.isIP(hostname) !== 0 || typeof done !== "function") {
      return void originalLookup.call(dns, hostname, options, callback);
    }
    const family = settings.family === "IPv4" ? 4 : settings.family === "IPv6" ? 6 : Number(settings.family ?? 0);
    lookupThroughProxy(proxyPath, hostname).then(
      (addresses) => {
        const wanted = family === 4 || family === 6 ? addresses.filter((entry) => entry.family === family) : addresses;
        if (wanted.length === 0) return done(connectionError("ENOTFOUND", `getaddrinfo ENOTFOUND ${hostname}`, hostname));
        if (settings.all) return done(null, wanted);
        done(null, wanted[0]!.address, wanted[0]!.family);
      },
      (error: unknown) => done(error),
    );
  };
  const lookupPromise = (hostname: string, options?: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const all = typeof options === "object" && options !== null && (options as { all?: boolean }).all === true;
      lookup(hostname, options ?? {}, (error: unknown, address: unknown, family: unknown) => (error ? reject(error) : resolve(all ? address : { address, family })));
    });
  Object.defineProperty(lookup, promisify.custom, { value: lookupPromise });
  dns.lookup = lookup as typeof dns.lookup;
  dns.promises.lookup = lookupPromise as typeof dns.promises.lookup;
}
