/**
 * `respond()` of an HTTP interface prop: checks what the component passed and
 * turns it into the HttpResponse the host hands to the waiting HTTP caller.
 */
import type { HttpResponse } from "../http-response.js";
import { toJsonText } from "./json-check.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readStatus(status: unknown, what: string): number {
  // Existing components pass numeric strings ("201"); the hosted service accepts them.
  const number = typeof status === "string" && /^\d{1,3}$/.test(status.trim()) ? Number(status.trim()) : status;
  if (typeof number !== "number" || !Number.isInteger(number) || number < 100 || number > 599) {
    throw new RangeError(`${what}: status must be an integer from 100 to 599, got ${JSON.stringify(status) ?? String(status)}.`);
  }
  return number;
}

function headerText(name: string, value: unknown, what: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  throw new TypeError(`${what}: header "${name}" must be a string (or an array of strings), got ${typeof value}.`);
}

function readHeaders(headers: unknown, what: string): Record<string, string | string[]> {
  if (headers === undefined || headers === null) return {};
  if (!isRecord(headers)) throw new TypeError(`${what}: headers must be an object of header names to values.`);
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    result[name] = Array.isArray(value) ? value.map((item) => headerText(name, item, what)) : headerText(name, value, what);
  }
  return result;
}

function hasHeader(headers: Record<string, unknown>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

/**
 * Throws an Error the component can read when the response is not one;
 * `what` names the function the component called (`$.respond()` in a step).
 */
export function toHttpResponse(input: unknown, what = "respond()"): HttpResponse {
  if (!isRecord(input)) throw new TypeError(`${what} takes an object: { status, headers?, body? }.`);
  const status = readStatus(input.status, what);
  const headers = readHeaders(input.headers, what);
  const body = input.body;
  if (body === undefined || body === null) return { status, headers, body: null };
  if (typeof body === "string") return { status, headers, body };
  if (body instanceof Uint8Array) return { status, headers, body: new Uint8Array(body) };
  if (body instanceof ArrayBuffer) return { status, headers, body: new Uint8Array(body.slice(0)) };
  const text = toJsonText(body, `${what}: body`);
  if (!hasHeader(headers, "content-type")) headers["content-type"] = "application/json; charset=utf-8";
  return { status, headers, body: text };
}
