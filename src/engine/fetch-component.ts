import { ValidationError } from "../domain/errors.js";

const MAX_CODE_BYTES = 5 * 1024 * 1024;
const FETCH_TIMEOUT_MS = 10_000;

/** Reads component code from an http(s) URL (raw code, as a repository host serves it). */
export async function fetchComponentCode(url: string): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ValidationError("component_url", `"${url}" is not a URL. Give the address of the component's raw code.`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new ValidationError("component_url", `component_url must be http:// or https://, not ${parsed.protocol}//.`);
  }
  let response: Response;
  try {
    response = await fetch(parsed, { redirect: "follow", signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (error) {
    const reason = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    throw new ValidationError("component_url", `Could not fetch ${url} (${reason}). Check the address, or send the code in component_code.`);
  }
  if (!response.ok) {
    throw new ValidationError("component_url", `Fetching ${url} answered ${response.status}. Give the address of the raw code.`);
  }
  const length = Number(response.headers.get("content-length") ?? 0);
  if (length > MAX_CODE_BYTES) throw new ValidationError("component_url", `The code at ${url} is over 5 MB.`);
  const text = await response.text();
  if (Buffer.byteLength(text) > MAX_CODE_BYTES) throw new ValidationError("component_url", `The code at ${url} is over 5 MB.`);
  return text;
}
