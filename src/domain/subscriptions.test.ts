import { describe, expect, it } from "vitest";
import { emitterMatches, globFor } from "./subscriptions.js";

describe("emitter globs", () => {
  it.each([
    ["dc_abc", "dc_*"],
    ["p_abc", "p_*"],
    ["u_abc", null],
  ])("%s is covered by %s", (id, glob) => expect(globFor(id)).toBe(glob));

  it.each([
    ["dc_1", "dc_1", true],
    ["dc_*", "dc_1", true],
    ["p_*", "dc_1", false],
    ["dc_2", "dc_1", false],
    ["*", "dc_1", false],
  ])("%s matches %s: %s", (subscribed, id, expected) => expect(emitterMatches(subscribed, id)).toBe(expected));
});
