import { describe, expect, it } from "vitest";
import { globFor } from "./subscriptions.js";

describe("emitter globs", () => {
  it.each([
    ["dc_abc", "dc_*"],
    ["p_abc", "p_*"],
    ["u_abc", null],
  ])("%s is covered by %s", (id, glob) => expect(globFor(id)).toBe(glob));
});
