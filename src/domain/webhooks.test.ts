import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { webhookIdempotencyKey, webhookRetryDelay, webhookSignature } from "./webhooks.js";

describe("webhook rules", () => {
  it("signs the body with HMAC-SHA256 of the secret", () => {
    const expected = createHmac("sha256", "s3cret").update('{"a":1}').digest("hex");
    expect(webhookSignature("s3cret", '{"a":1}')).toBe(`sha256=${expected}`);
    expect(webhookSignature("other", '{"a":1}')).not.toBe(`sha256=${expected}`);
  });

  it("keys an event to a webhook the same way every time", () => {
    expect(webhookIdempotencyKey("wh_1", "dc_1", "1-0")).toBe(webhookIdempotencyKey("wh_1", "dc_1", "1-0"));
    expect(webhookIdempotencyKey("wh_1", "dc_1", "1-0")).not.toBe(webhookIdempotencyKey("wh_2", "dc_1", "1-0"));
  });

  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [4, null],
  ])("after failed attempt %i of 4 waits %s ms", (attempt, wait) => {
    expect(webhookRetryDelay(attempt, { maxAttempts: 4, baseDelayMs: 100 })).toBe(wait);
  });

  it("never waits more than an hour", () => {
    expect(webhookRetryDelay(30, { maxAttempts: 100, baseDelayMs: 10_000 })).toBe(3_600_000);
  });
});
