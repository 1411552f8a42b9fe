/**
 * The check of a webhook's URL at creation: http(s) with a host, and not
 * one of the server's own networks unless the admin allowed it
 * (RUNNEL_EGRESS_ALLOW, the same list and policy as user code's network).
 * The address is checked again at each delivery (egress-request.ts), since
 * what a name resolves to can change.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { EgressPolicy } from "../../domain/egress-policy.js";
import { ValidationError } from "../../domain/errors.js";

/** How long a name may take to resolve at creation; a name that does not resolve is checked at delivery instead. */
const LOOKUP_TIMEOUT_MS = 3_000;

export type ResolveAll = (hostname: string) => Promise<string[]>;

const resolveAll: ResolveAll = async (hostname) => (await lookup(hostname, { all: true })).map((entry) => entry.address);

/** The URL, parsed; a ValidationError naming `url` (and the setting to change) when it cannot be a webhook's. */
export async function checkWebhookUrl(raw: string, policy: EgressPolicy | null, resolve: ResolveAll = resolveAll): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notHttp(raw);
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") throw notHttp(raw);
  if (!policy) return url;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(host) !== 0 ? [host] : await resolveWithin(host, resolve);
  for (const address of addresses) {
    const verdict = policy.check(address, isIP(host) !== 0 ? undefined : host);
    if (!verdict.allowed) {
      throw new ValidationError(
        "url",
        `The webhook URL ${raw} reaches ${verdict.reason}: webhooks may reach the public internet only. An admin can allow this host or range with RUNNEL_EGRESS_ALLOW (comma-separated hosts or CIDR ranges).`,
      );
    }
  }
  return url;
}

function notHttp(raw: string): ValidationError {
  return new ValidationError("url", `"${raw}" is not a webhook URL: it needs http:// or https:// and a host name, such as https://example.com/hook.`);
}

/** Every address the name resolves to; none when it does not resolve (yet), or not in time. */
async function resolveWithin(hostname: string, resolve: ResolveAll): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string[]>((done) => {
    timer = setTimeout(() => done([]), LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([resolve(hostname).catch(() => []), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
