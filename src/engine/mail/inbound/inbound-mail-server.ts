import type { AddressInfo } from "node:net";
import { simpleParser } from "mailparser";
import type { Logger } from "pino";
import { SMTPServer, type SMTPServerAddress, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import type { DeployedSource } from "../../../domain/sources.js";
import { tokenOf } from "./inbound-address.js";
import { mailEvent, type MailEvent } from "./mail-event.js";

/** Where inbound mail goes: the sources it may be for, and how one receives it. */
export interface InboundMailTargets {
  /** The active source that receives mail at this token, or null (none, turned off, or not an inbound mail source). */
  mailSource(token: string): Promise<DeployedSource | null>;
  /** Runs the source on the message's event; resolves once its events are stored, false when its run failed. */
  deliver(source: DeployedSource, event: MailEvent): Promise<boolean>;
}

export interface InboundMailOptions {
  host: string;
  port: number;
  /** RUNNEL_SMTP_DOMAIN: the one domain mail is taken for; null: any. */
  domain: string | null;
  maxMessageBytes: number;
  targets: InboundMailTargets;
  logger: Logger;
  now?: () => Date;
}

export interface InboundMailServer {
  host: string;
  port: number;
  close(): Promise<void>;
}

/** Recipients one message may have here: a message for many sources is spam or a loop. */
const MAX_RECIPIENTS = 20;
/** Connections served at once; each may hold a message of up to the size limit in memory. */
const MAX_CLIENTS = 32;
/** The largest header block of one MIME part: a bigger one is refused, not parsed. */
const MAX_HEAD_BYTES = 256 * 1024;
/** MIME parts of one message at most. */
const MAX_PARTS = 200;
/** HTML longer than this is not turned into text (the conversion's time grows with it). */
const MAX_HTML_TO_TEXT = 2 * 1024 * 1024;

/** An SMTP answer with its code, as smtp-server sends an error's `responseCode`. */
function smtpError(code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code });
}

/**
 * Runnel's own SMTP listener (RUNNEL_SMTP_LISTEN): takes mail for inbound
 * mail sources, refuses every other recipient at RCPT TO, refuses a message
 * over the size limit with 552 and one it cannot read with 554, and answers
 * 250 only once every source the message is for has stored its event (451,
 * "try again later", when one could not). No relaying, no AUTH, no TLS:
 * put it behind your MX (or a relay that does TLS) on port 25.
 */
export async function startInboundMailServer(options: InboundMailOptions): Promise<InboundMailServer> {
  const { logger, targets } = options;
  const now = options.now ?? (() => new Date());
  /**
   * The source each accepted recipient is for, by the address object that
   * smtp-server then keeps in the session's envelope: the envelope stays the
   * one truth (RSET and a new MAIL FROM clear it), and nothing needs cleaning up.
   */
  const accepted = new WeakMap<SMTPServerAddress, DeployedSource>();

  const server = new SMTPServer({
    name: options.domain ?? undefined,
    banner: "Runnel inbound mail",
    authOptional: true,
    disabledCommands: ["AUTH", "STARTTLS"],
    size: options.maxMessageBytes,
    maxClients: MAX_CLIENTS,
    maxRecipients: MAX_RECIPIENTS,
    socketTimeout: 60_000,
    closeTimeout: 5_000,
    logger: false,
    onRcptTo(address: SMTPServerAddress, _session: SMTPServerSession, callback: (error?: Error | null) => void) {
      void recipient(address).then(
        () => callback(),
        (error: Error) => callback(error),
      );
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (error?: Error | null, message?: string) => void) {
      void receive(stream, session).then(
        (message) => callback(null, message),
        (error: Error) => callback(error),
      );
    },
  });
  // A client's broken connection is its problem, never the server's: logged, and the listener goes on.
  server.on("error", (error: Error) => logger.debug({ err: error }, "inbound mail: a connection failed"));

  async function recipient(address: SMTPServerAddress): Promise<void> {
    const verdict = tokenOf(address.address, options.domain);
    if (!verdict.ok) throw smtpError(550, `5.1.1 ${verdict.reason}`);
    let source: DeployedSource | null;
    try {
      source = await targets.mailSource(verdict.token);
    } catch (error) {
      logger.error({ err: error }, "inbound mail: looking up a recipient failed");
      throw smtpError(451, "4.3.0 The recipient could not be looked up; try again later");
    }
    if (!source) throw smtpError(550, `5.1.1 No mailbox ${address.address} here`);
    accepted.set(address, source);
  }

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const chunks: Buffer[] = [];
    let bytes = 0;
    await new Promise<void>((resolve, reject) => {
      stream.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        // Past the limit the rest is read and dropped: the client is told at the end, as SMTP wants.
        if (bytes <= options.maxMessageBytes) chunks.push(chunk);
      });
      stream.once("end", resolve);
      stream.once("error", reject);
    });
    // Each source once, however many of its addresses (+tags) the message names.
    const bySource = new Map<string, DeployedSource>();
    for (const rcpt of session.envelope.rcptTo) {
      const source = accepted.get(rcpt);
      if (source) bySource.set(source.id, source);
    }
    const sources = [...bySource.values()];
    if (stream.sizeExceeded || bytes > options.maxMessageBytes) {
      throw smtpError(552, `5.3.4 Message too big: this server takes messages of up to ${Math.floor(options.maxMessageBytes / 1024 / 1024)} MB`);
    }
    if (sources.length === 0) throw smtpError(503, "5.5.1 No valid recipients");

    let event: MailEvent;
    try {
      const parsed = await simpleParser(Buffer.concat(chunks), {
        maxHeadSize: MAX_HEAD_BYTES,
        maxChildNodes: MAX_PARTS,
        maxHtmlLengthToParse: MAX_HTML_TO_TEXT,
        skipTextToHtml: true,
        skipImageLinks: true,
        keepCidLinks: true,
      });
      const envelope = {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
        rcptTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
        remoteAddress: session.remoteAddress ?? null,
      };
      event = mailEvent(parsed, envelope, now());
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      logger.info({ reason }, "inbound mail: refused a message that could not be parsed");
      throw smtpError(554, `5.6.0 The message could not be read (${reason.slice(0, 200)}); nothing was delivered`);
    }

    const delivered = await Promise.allSettled(sources.map((source) => targets.deliver(source, event)));
    const failed = delivered.filter((outcome) => outcome.status === "rejected" || outcome.value === false).length;
    for (const outcome of delivered) if (outcome.status === "rejected") logger.error({ err: outcome.reason }, "inbound mail: delivering a message to its source failed");
    // Sources that stored it drop the repeat by its Message-ID (their dedupe), so a retry costs nothing twice.
    if (failed > 0) throw smtpError(451, `4.3.0 The message could not be delivered to ${failed} of ${sources.length} recipients for now; try again later`);
    return `Delivered to ${sources.length} source${sources.length === 1 ? "" : "s"}`;
  }

  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, options.host, options.port));
    server.server.once("error", failed);
    server.listen(options.port, options.host, () => {
      server.server.removeListener("error", failed);
      resolve();
    });
  });
  const address = server.server.address() as AddressInfo;
  logger.info({ host: options.host, port: address.port, domain: options.domain }, "inbound mail: listening for mail to e-mail sources");
  return {
    host: options.host,
    port: address.port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Why the listener could not start, naming its setting. A new error without
 * the socket's code: the start-up explainer would take that for the API's port.
 */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code === "EADDRINUSE") return new Error(`RUNNEL_SMTP_LISTEN: port ${port} on ${host} is already in use. Stop what uses it, or choose another port.`);
  if (error.code === "EACCES") {
    return new Error(`RUNNEL_SMTP_LISTEN: not allowed to listen on port ${port} (ports below 1024 need privileges). Grant CAP_NET_BIND_SERVICE, or listen on a high port such as 2525 and forward port 25 to it.`);
  }
  return new Error(`RUNNEL_SMTP_LISTEN: cannot listen on ${host}:${port} (${error.code ?? error.message}).`);
}
