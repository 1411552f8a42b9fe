import { describe, expect, it } from "vitest";
import { createEgressPolicy, EgressAllowListError } from "./egress-policy.js";

describe("the default egress policy", () => {
  const policy = createEgressPolicy();

  it.each([
    ["8.8.8.8"],
    ["1.1.1.1"],
    ["93.184.215.14"],
    ["198.51.100.7"],
    ["2606:4700:4700::1111"],
    ["2001:4860:4860::8888"],
    // NAT64 and 6to4 of a public address are public.
    ["64:ff9b::808:808"],
    ["2002:0808:0808::1"],
  ])("lets user code reach the public address %s", (address) => {
    expect(policy.check(address)).toEqual({ allowed: true });
  });

  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.1.2", "loopback"],
    ["0.0.0.0", "this host"],
    ["10.0.0.5", "a private network"],
    ["172.16.0.1", "a private network"],
    ["172.31.255.254", "a private network"],
    ["192.168.1.1", "a private network"],
    ["100.64.0.1", "shared address space"],
    ["169.254.169.254", "link-local, where cloud metadata services live"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved and broadcast"],
    ["::1", "loopback"],
    ["::", "the unspecified address"],
    ["fd00::1", "a private network"],
    ["fe80::1", "link-local"],
    ["ff02::1", "multicast"],
    // IPv4-mapped, NAT64 and 6to4 forms of the server's own addresses.
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:a9fe:a9fe", "link-local"],
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::169.254.169.254", "link-local"],
    ["2002:c0a8:0101::1", "a private network"],
  ])("refuses %s (%s)", (address, range) => {
    const verdict = policy.check(address);
    expect(verdict.allowed).toBe(false);
    expect(verdict.allowed ? "" : verdict.reason).toContain(range);
  });

  it("refuses what is not an address", () => {
    expect(policy.check("localhost")).toEqual({ allowed: false, reason: '"localhost" is not an IP address' });
  });

  it("leaves 172.15 and 172.32 (outside 172.16/12) and 100.63 public", () => {
    for (const address of ["172.15.0.1", "172.32.0.1", "100.63.255.255", "100.128.0.1", "169.253.0.1"]) expect(policy.check(address).allowed).toBe(true);
  });
});

describe("an allow list", () => {
  const policy = createEgressPolicy(["10.1.0.0/16", "192.168.5.7", "db.internal", "*.corp.example", "[fd12::1]", "127.0.0.1/32"]);

  it("opens CIDR ranges and single addresses, in both families", () => {
    expect(policy.check("10.1.200.3").allowed).toBe(true);
    expect(policy.check("10.2.0.1").allowed).toBe(false);
    expect(policy.check("192.168.5.7").allowed).toBe(true);
    expect(policy.check("192.168.5.8").allowed).toBe(false);
    expect(policy.check("fd12::1").allowed).toBe(true);
    expect(policy.check("127.0.0.1").allowed).toBe(true);
    expect(policy.check("127.0.0.2").allowed).toBe(false);
  });

  it("opens a name, and names below a wildcard, whatever they resolve to", () => {
    expect(policy.check("10.9.9.9", "db.internal").allowed).toBe(true);
    expect(policy.check("10.9.9.9", "DB.Internal.").allowed).toBe(true);
    expect(policy.check("10.9.9.9", "a.b.corp.example").allowed).toBe(true);
    expect(policy.check("10.9.9.9", "corp.example").allowed).toBe(false);
    expect(policy.check("10.9.9.9", "evil-db.internal").allowed).toBe(false);
    expect(policy.check("10.9.9.9", "db.internal.evil.example").allowed).toBe(false);
  });

  it("keeps its entries as given", () => {
    expect(policy.allowList).toContain("db.internal");
  });

  it.each([["10.0.0.0/33"], ["10.0.0/8"], ["not a host"], ["http://x.example"], ["::1/129"], ["*.*.example"]])("refuses the entry %s, naming it", (entry) => {
    expect(() => createEgressPolicy([entry])).toThrow(EgressAllowListError);
    expect(() => createEgressPolicy([entry])).toThrow(`"${entry}" is not a host name`);
  });
});
