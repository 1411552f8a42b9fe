import { randomBytes } from "node:crypto";

/**
 * An RFC 5322 message with MIME bodies, written here so that the catalog
 * needs no mail package: UTF-8 everywhere, bodies in base64 (safe for any
 * text and any line length), headers with non-ASCII text as encoded words.
 */

/** `ada@example.com` or `Ada Lovelace <ada@example.com>`: the address, and the name when given. */
export function parseAddress(text, prop) {
  if (typeof text !== "string" || /[\r\n]/.test(text)) throw new Error(`Prop "${prop}" must be one line of text, an e-mail address.`);
  const trimmed = text.trim();
  const named = /^(.*?)\s*<([^<>]+)>$/.exec(trimmed);
  const address = (named ? named[2] : trimmed).trim();
  if (!/^[^\s@<>(),;:"]+@[^\s@<>(),;:"]+\.?[^\s@<>(),;:"]*$/.test(address) || address.length > 254) {
    throw new Error(`Prop "${prop}" has "${trimmed.slice(0, 100)}", which is not an e-mail address such as ada@example.com or "Ada <ada@example.com>".`);
  }
  const name = named ? named[1].replace(/^"|"$/g, "").trim() : "";
  return { address, name };
}

function formatAddress({ address, name }) {
  if (!name) return address;
  return /^[\x20-\x7e]*$/.test(name) ? `"${name.replace(/["\\]/g, "\\$&")}" <${address}>` : `${encodeWord(name)} <${address}>`;
}

/** Non-ASCII header text as RFC 2047 encoded words, each short enough for a 78-character line. */
export function encodeWord(text) {
  if (/^[\x20-\x7e]*$/.test(text)) return text;
  const words = [];
  let chunk = "";
  for (const character of text) {
    if (Buffer.byteLength(chunk + character) > 45) {
      words.push(chunk);
      chunk = "";
    }
    chunk += character;
  }
  if (chunk) words.push(chunk);
  return words.map((word) => `=?UTF-8?B?${Buffer.from(word).toString("base64")}?=`).join("\r\n ");
}

function base64Lines(text) {
  return Buffer.from(text, "utf8").toString("base64").replace(/.{76}/g, "$&\r\n");
}

function partHeaders(contentType) {
  return [`Content-Type: ${contentType}; charset=utf-8`, "Content-Transfer-Encoding: base64"];
}

function part(contentType, text) {
  return [...partHeaders(contentType), "", base64Lines(text)].join("\r\n");
}

/**
 * The message's text, with CRLF line ends. `mail`: { from, to[], cc[], replyTo?,
 * subject, text?, html? }, addresses as parseAddress gives them.
 */
export function buildMessage(mail, now = new Date()) {
  const domain = mail.from.address.split("@")[1] || "localhost";
  const messageId = `<${Date.now().toString(36)}.${randomBytes(9).toString("hex")}@${domain}>`;
  const headers = [
    `From: ${formatAddress(mail.from)}`,
    // One address a line: a long list must not pass the 998-character line limit.
    `To: ${mail.to.map(formatAddress).join(",\r\n ")}`,
    ...(mail.cc.length ? [`Cc: ${mail.cc.map(formatAddress).join(",\r\n ")}`] : []),
    ...(mail.replyTo ? [`Reply-To: ${formatAddress(mail.replyTo)}`] : []),
    `Subject: ${encodeWord(mail.subject)}`,
    `Date: ${now.toUTCString().replace("GMT", "+0000")}`,
    `Message-ID: ${messageId}`,
    "MIME-Version: 1.0",
  ];
  let body;
  if (mail.text !== undefined && mail.html !== undefined) {
    const boundary = `----=_runnel_${randomBytes(12).toString("hex")}`;
    headers.push(`Content-Type: multipart/alternative; boundary="${boundary}"`);
    body = ["", `--${boundary}`, part("text/plain", mail.text), `--${boundary}`, part("text/html", mail.html), `--${boundary}--`, ""].join("\r\n");
  } else {
    const [type, text] = mail.html !== undefined ? ["text/html", mail.html] : ["text/plain", mail.text ?? ""];
    headers.push(...partHeaders(type));
    body = `\r\n${base64Lines(text)}\r\n`;
  }
  return { messageId, text: `${headers.join("\r\n")}\r\n${body}` };
}
