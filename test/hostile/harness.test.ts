import { describe, expect, it } from "vitest";
import { expectBystanderServed } from "./harness.js";

/** The bystander check is what every hostile test leans on: it must fail when the bystander was not served. */
describe("expectBystanderServed", () => {
  it("passes when every answer is a 200 carrying its own request's number", () => {
    expect(() => expectBystanderServed([{ n: 1, status: 200, body: { bystander: 1 } }, { n: 2, status: 200, body: { bystander: 2 } }])).not.toThrow();
  });

  it.each([
    ["no answers at all", []],
    ["a 502", [{ n: 1, status: 502, body: { error: { code: "SourceFailed" } } }]],
    ["a request that got no answer", [{ n: 1, status: 0, body: null, error: "fetch failed" }]],
    ["someone else's answer", [{ n: 1, status: 200, body: { bystander: 2 } }]],
    ["a 200 that is not the bystander's", [{ n: 1, status: 200, body: { ok: true } }]],
  ])("fails on %s", (_case, answers) => {
    expect(() => expectBystanderServed(answers)).toThrow();
  });
});
