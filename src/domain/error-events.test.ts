import { describe, expect, it } from "vitest";
import { errorEventBody, sourceTypeOf } from "./error-events.js";

describe("errorEventBody", () => {
  it("gives exactly the seed's fields, typed as the seed says", () => {
    const body = errorEventBody({
      workflow: { id: "p_1", ownerId: "u_1", deploymentId: "d_1" },
      originalEvent: { body: { a: 1 } },
      originalEventId: "1700000000000-3",
      originalEventAtMs: 1_700_000_000_000,
      sourceType: "HTTP",
      error: { code: "UserError", msg: "boom", name: "Error", cellId: "c_1", ts: "2023-11-14T22:13:20.000Z", stack: "Error: boom\n    at run" },
      platformVersion: "0.1.0",
    });
    expect(body).toEqual({
      original_event: { body: { a: 1 } },
      original_context: {
        id: "1700000000000-3",
        ts: "2023-11-14T22:13:20.000Z",
        workflow_id: "p_1",
        deployment_id: "d_1",
        source_type: "HTTP",
        verified: false,
        owner_id: "u_1",
        platform_version: "0.1.0",
      },
      error: { code: "UserError", msg: "boom", cellId: "c_1", ts: "2023-11-14T22:13:20.000Z", stack: "Error: boom\n    at run" },
    });
  });

  it("gives null for an event that was undefined, so the field is always there", () => {
    const body = errorEventBody({
      workflow: { id: "p_1", ownerId: "u_1", deploymentId: "d_1" },
      originalEvent: undefined,
      originalEventId: "1-0",
      originalEventAtMs: 0,
      sourceType: "TIMER",
      error: { code: "Timeout", msg: "late", name: "Timeout", cellId: "c_2", ts: "x", stack: "Timeout: late" },
      platformVersion: "0.1.0",
    });
    expect(body.original_event).toBeNull();
  });
});

describe("sourceTypeOf", () => {
  it.each([
    ["dc_1", "", "http", "HTTP"],
    ["dc_1", "", "timer", "TIMER"],
    ["dc_1", "", "other", "COMPONENT"],
    ["p_1", "$errors", "other", "EMIT"],
    ["p_1", "$replay", "other", "REPLAY"],
  ] as const)("%s on %j from a %s trigger is %s", (emitter, channel, kind, expected) => {
    expect(sourceTypeOf(emitter, channel, kind)).toBe(expected);
  });
});
