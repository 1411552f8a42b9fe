import { connect as connectTcp } from "node:net";
import { connect as connectTls } from "node:tls";

/**
 * A small SMTP client (RFC 5321) on node's own sockets: EHLO, STARTTLS or
 * TLS from the start, AUTH PLAIN or LOGIN, one message to its recipients.
 * Every failure is an Error that says which step failed and what the server
 * answered, without the password.
 */

const CONNECT_TIMEOUT_MS = 15_000;
const IDLE_TIMEOUT_MS = 30_000;
/** A reply longer than this is not an SMTP server talking. */
const MAX_REPLY_BYTES = 64 * 1024;

/** Reads SMTP replies (possibly multi-line: `250-…` then `250 …`) from a socket, one at a time. */
class ReplyReader {
  constructor(socket, what) {
    this.what = what;
    this.buffer = "";
    this.lines = [];
    this.waiting = null;
    this.failure = null;
    this.attach(socket);
  }

  attach(socket) {
    this.socket = socket;
    socket.setEncoding("utf8");
    socket.on("data", (chunk) => {
      this.buffer += chunk;
      if (this.buffer.length > MAX_REPLY_BYTES) return this.fail(new Error(`${this.what} sent a reply over ${MAX_REPLY_BYTES / 1024} KB; is it an SMTP server?`));
      this.pump();
    });
    socket.on("error", (error) => this.fail(new Error(`The connection to ${this.what} failed: ${error.message}`)));
    socket.on("close", () => this.fail(new Error(`${this.what} closed the connection`)));
    socket.setTimeout(IDLE_TIMEOUT_MS, () => {
      this.fail(new Error(`${this.what} did not answer within ${IDLE_TIMEOUT_MS / 1000} s`));
      socket.destroy();
    });
  }

  /** Stops listening to the plain socket before it is wrapped in TLS. */
  detach() {
    this.socket.removeAllListeners("data");
    this.socket.removeAllListeners("error");
    this.socket.removeAllListeners("close");
    this.socket.setTimeout(0);
  }

  fail(error) {
    if (this.failure) return;
    this.failure = error;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(error);
  }

  pump() {
    let end;
    while ((end = this.buffer.indexOf("\n")) !== -1) {
      const line = this.buffer.slice(0, end).replace(/\r$/, "");
      this.buffer = this.buffer.slice(end + 1);
      this.lines.push(line);
      if (/^\d{3} /.test(line) || /^\d{3}$/.test(line)) {
        const reply = { code: Number(line.slice(0, 3)), lines: this.lines.map((text) => text.slice(4)), text: this.lines.join(" ") };
        this.lines = [];
        const waiting = this.waiting;
        this.waiting = null;
        if (waiting) waiting.resolve(reply);
        else this.early = reply;
      }
    }
  }

  next() {
    if (this.early) {
      const reply = this.early;
      this.early = null;
      return Promise.resolve(reply);
    }
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }
}

/** The server's reply, as one line for a message. */
function said(reply) {
  return reply.text.replace(/\s+/g, " ").slice(0, 300);
}

function openSocket(options) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`Could not connect to ${options.host}:${options.port} within ${CONNECT_TIMEOUT_MS / 1000} s.`));
    }, CONNECT_TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      socket.removeListener("error", failed);
      resolve(socket);
    };
    const failed = (error) => {
      clearTimeout(timer);
      reject(new Error(`Could not connect to ${options.host}:${options.port}: ${error.message}`));
    };
    const socket =
      options.security === "tls"
        ? connectTls({ host: options.host, port: options.port, servername: options.host, rejectUnauthorized: !options.allowUntrustedCertificate }, done)
        : connectTcp({ host: options.host, port: options.port }, done);
    socket.once("error", failed);
  });
}

/**
 * Sends `message` (the whole text, CRLF line ends) from `envelope.from` to
 * `envelope.recipients`. `options`: { host, port, security: "starttls" |
 * "tls" | "none", username?, password?, allowUntrustedCertificate?, clientName? }.
 * Resolves with { accepted, response } (the server's answer to the message).
 */
export async function sendMail(options, envelope, message) {
  const what = `the SMTP server ${options.host}:${options.port}`;
  let socket = await openSocket(options);
  const reader = new ReplyReader(socket, what);
  const command = async (line, expected, step, shown = line) => {
    socket.write(`${line}\r\n`);
    const reply = await reader.next();
    if (!expected.includes(reply.code)) throw new Error(`${what} refused ${step} (${shown}): ${said(reply)}`);
    return reply;
  };
  try {
    const greeting = await reader.next();
    if (greeting.code !== 220) throw new Error(`${what} did not greet as an SMTP server does: ${said(greeting)}`);
    const name = options.clientName ?? "runnel.localdomain";
    let hello = await command(`EHLO ${name}`, [250], "EHLO");
    let extensions = hello.lines.slice(1).map((line) => line.toUpperCase());

    if (options.security === "starttls") {
      if (!extensions.some((line) => line.startsWith("STARTTLS"))) {
        throw new Error(`${what} does not offer STARTTLS. Choose security "tls" if it takes TLS from the start (usually port 465), or "none" for a server on a trusted network.`);
      }
      await command("STARTTLS", [220], "STARTTLS");
      reader.detach();
      socket = await new Promise((resolve, reject) => {
        const secured = connectTls({ socket, servername: options.host, rejectUnauthorized: !options.allowUntrustedCertificate }, () => resolve(secured));
        secured.once("error", (error) => reject(new Error(`TLS with ${what} failed: ${error.message}`)));
      });
      reader.attach(socket);
      hello = await command(`EHLO ${name}`, [250], "EHLO after STARTTLS");
      extensions = hello.lines.slice(1).map((line) => line.toUpperCase());
    }

    if (options.username) {
      const auth = extensions.find((line) => line.startsWith("AUTH"));
      const mechanisms = auth ? auth.slice(5).split(/[\s=]+/) : [];
      if (mechanisms.includes("PLAIN")) {
        const token = Buffer.from(`\u0000${options.username}\u0000${options.password ?? ""}`).toString("base64");
        await authenticated(command(`AUTH PLAIN ${token}`, [235], "the user name or password", "AUTH PLAIN"));
      } else if (mechanisms.includes("LOGIN")) {
        await command("AUTH LOGIN", [334], "AUTH LOGIN");
        await command(Buffer.from(options.username).toString("base64"), [334], "the user name", "AUTH LOGIN user");
        await authenticated(command(Buffer.from(options.password ?? "").toString("base64"), [235], "the user name or password", "AUTH LOGIN password"));
      } else {
        throw new Error(`${what} offers no login this action knows (PLAIN or LOGIN)${auth ? `; it offers ${auth}` : options.security === "none" ? "; many servers offer it only after STARTTLS" : ""}.`);
      }
    }

    await command(`MAIL FROM:<${envelope.from}>`, [250], "the sender", `MAIL FROM:<${envelope.from}>`);
    const accepted = [];
    const refused = [];
    for (const recipient of envelope.recipients) {
      socket.write(`RCPT TO:<${recipient}>\r\n`);
      const reply = await reader.next();
      if (reply.code === 250 || reply.code === 251) accepted.push(recipient);
      else refused.push(`${recipient} (${said(reply)})`);
    }
    if (refused.length > 0) throw new Error(`${what} refused the recipient${refused.length === 1 ? "" : "s"} ${refused.join("; ")}. Nothing was sent.`);
    await command("DATA", [354], "DATA");
    // Dot-stuffing: a line that starts with "." gets another, so that it cannot end the message.
    socket.write(`${message.replace(/\r?\n/g, "\r\n").replace(/^\./gm, "..")}\r\n.\r\n`);
    const response = await reader.next();
    if (response.code !== 250) throw new Error(`${what} refused the message: ${said(response)}`);
    socket.write("QUIT\r\n");
    return { accepted, response: said(response) };
  } finally {
    reader.detach();
    socket.end();
    setTimeout(() => socket.destroy(), 1000).unref?.();
  }
}

/** A refused login is told as such: the server's 535 alone reads like a crash. */
async function authenticated(attempt) {
  try {
    return await attempt;
  } catch (error) {
    throw new Error(`${error.message}. Check the user name and password.`);
  }
}
