/**
 * Which addresses user code may connect to. By default: the public
 * internet, and nothing of the server's own (loopback, link-local where
 * cloud metadata services live, private and shared ranges, multicast,
 * reserved). An admin opens what they need with RUNNEL_EGRESS_ALLOW:
 * host names (exact, or `*.example.com` for the names below it), addresses
 * and CIDR ranges.
 *
 * The rule is applied to the address actually connected to (after DNS, by
 * whoever connects: the egress proxy for runners, the host's own HTTP
 * client for `$.send.http`), so a name that resolves to 127.0.0.1 or a
 * redirect to an internal address is refused like the address itself.
 */
import { BlockList, isIP } from "node:net";

export type EgressVerdict = { allowed: true } | { allowed: false; reason: string };

export interface EgressPolicy {
  /** Whether `address` (an IP literal) may be connected to; `hostname` is the name it was asked by, when there was one. */
  check(address: string, hostname?: string): EgressVerdict;
  /** The entries of the allow list, as given (for logs and errors). */
  readonly allowList: readonly string[];
}

/** Ranges that are the server's own or nobody's: never the public internet. */
const DENIED_V4: Array<[string, number, string]> = [
  ["0.0.0.0", 8, "this host (0.0.0.0/8)"],
  ["10.0.0.0", 8, "a private network (10.0.0.0/8)"],
  ["100.64.0.0", 10, "shared address space (100.64.0.0/10)"],
  ["127.0.0.0", 8, "loopback (127.0.0.0/8)"],
  ["169.254.0.0", 16, "link-local, where cloud metadata services live (169.254.0.0/16)"],
  ["172.16.0.0", 12, "a private network (172.16.0.0/12)"],
  ["192.0.0.0", 24, "IETF protocol assignments (192.0.0.0/24)"],
  ["192.168.0.0", 16, "a private network (192.168.0.0/16)"],
  ["198.18.0.0", 15, "benchmarking networks (198.18.0.0/15)"],
  ["224.0.0.0", 4, "multicast (224.0.0.0/4)"],
  ["240.0.0.0", 4, "reserved and broadcast (240.0.0.0/4)"],
];
const DENIED_V6: Array<[string, number, string]> = [
  ["::", 128, "the unspecified address (::)"],
  ["::1", 128, "loopback (::1)"],
  ["100::", 64, "the discard prefix (100::/64)"],
  ["64:ff9b:1::", 48, "local-use NAT64 (64:ff9b:1::/48)"],
  ["fc00::", 7, "a private network (fc00::/7)"],
  ["fe80::", 10, "link-local (fe80::/10)"],
  ["fec0::", 10, "site-local (fec0::/10)"],
  ["ff00::", 8, "multicast (ff00::/8)"],
];

/**
 * IPv6 forms that carry an IPv4 address inside (NAT64, 6to4): the embedded
 * address is what is reached, so it is checked too. IPv4-mapped addresses
 * (::ffff:a.b.c.d) are matched against the IPv4 rules by BlockList itself.
 */
function embeddedIPv4(address: string): string | null {
  const groups = expandIPv6(address);
  if (!groups) return null;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  // 64:ff9b::/96 (well-known NAT64 prefix): the last 32 bits.
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) return v4(groups[6]!, groups[7]!);
  // 2002::/16 (6to4): bits 16–48.
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return null;
}

/** The eight 16-bit groups of an IPv6 literal (no zone), or null when it is not one. */
function expandIPv6(address: string): number[] | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase();
  // A dotted IPv4 tail becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split(".").map(Number);
    text = `${text.slice(0, -dotted[1]!.length)}${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const missing = 8 - headGroups.length - tailGroups.length;
  const all = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill("0"), ...tailGroups];
  return all.length === 8 ? all.map((group) => parseInt(group, 16)) : null;
}

interface AllowEntries {
  addresses: BlockList;
  names: Set<string>;
  suffixes: string[];
}

/** An entry of RUNNEL_EGRESS_ALLOW that is neither an address, a CIDR range nor a host name. */
export class EgressAllowListError extends Error {
  constructor(readonly entry: string) {
    super(`"${entry}" is not a host name (api.example.com, *.example.com), an address (10.0.0.5) or a CIDR range (10.0.0.0/24).`);
    this.name = "EgressAllowListError";
  }
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/;

function parseAllowList(entries: readonly string[]): AllowEntries {
  const allow: AllowEntries = { addresses: new BlockList(), names: new Set(), suffixes: [] };
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase().replace(/^\[(.*)\]$/, "$1");
    if (entry === "") continue;
    const slash = entry.indexOf("/");
    if (slash >= 0) {
      const network = entry.slice(0, slash);
      const prefixText = entry.slice(slash + 1);
      const family = isIP(network);
      const prefix = Number(prefixText);
      if (family === 0 || !/^\d{1,3}$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) throw new EgressAllowListError(raw.trim());
      allow.addresses.addSubnet(network, prefix, family === 4 ? "ipv4" : "ipv6");
    } else if (isIP(entry) !== 0) {
      allow.addresses.addAddress(entry, isIP(entry) === 4 ? "ipv4" : "ipv6");
    } else if (entry.startsWith("*.") && HOST_NAME.test(entry.slice(2))) {
      allow.suffixes.push(entry.slice(1).replace(/\.$/, ""));
    } else if (HOST_NAME.test(entry)) {
      allow.names.add(entry.replace(/\.$/, ""));
    } else {
      throw new EgressAllowListError(raw.trim());
    }
  }
  return allow;
}

function familyOf(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

/**
 * The policy for `allowList` (RUNNEL_EGRESS_ALLOW's entries). Throws an
 * EgressAllowListError naming the first entry it cannot read.
 */
export function createEgressPolicy(allowList: readonly string[] = []): EgressPolicy {
  const allow = parseAllowList(allowList);
  const denied = new BlockList();
  const reasons: Array<{ list: BlockList; reason: string }> = [];
  for (const [network, prefix, reason] of DENIED_V4) {
    const single = new BlockList();
    single.addSubnet(network, prefix, "ipv4");
    denied.addSubnet(network, prefix, "ipv4");
    reasons.push({ list: single, reason });
  }
  for (const [network, prefix, reason] of DENIED_V6) {
    const single = new BlockList();
    single.addSubnet(network, prefix, "ipv6");
    denied.addSubnet(network, prefix, "ipv6");
    reasons.push({ list: single, reason });
  }
  const nameAllowed = (hostname: string | undefined): boolean => {
    if (!hostname) return false;
    const name = hostname.toLowerCase().replace(/\.$/, "");
    return allow.names.has(name) || allow.suffixes.some((suffix) => name.endsWith(suffix));
  };
  const deniedReason = (address: string): string | null => {
    const family = familyOf(address);
    if (!denied.check(address, family)) return null;
    return reasons.find(({ list }) => list.check(address, family))?.reason ?? "an address of the server's own networks";
  };

  return {
    allowList: Object.freeze([...allowList]),
    check(address, hostname) {
      if (isIP(address) === 0) return { allowed: false, reason: `"${address}" is not an IP address` };
      if (allow.addresses.check(address, familyOf(address)) || nameAllowed(hostname)) return { allowed: true };
      const own = deniedReason(address);
      if (own) return { allowed: false, reason: `${address} is ${own}` };
      const inner = embeddedIPv4(address);
      if (inner) {
        if (allow.addresses.check(inner, "ipv4")) return { allowed: true };
        const innerReason = deniedReason(inner);
        if (innerReason) return { allowed: false, reason: `${address} carries ${inner}, which is ${innerReason}` };
      }
      return { allowed: true };
    },
  };
}

/** What user code is told when a connection is refused: what happened and what the admin can do. */
export function egressDeniedMessage(target: string, reason: string): string {
  return `Connection to ${target} refused by Runnel's network policy: ${reason}. User code reaches the public internet only; an admin can open an address or host with RUNNEL_EGRESS_ALLOW.`;
}
