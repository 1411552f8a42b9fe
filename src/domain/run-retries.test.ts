import { describe, expect, it } from "vitest";
import { validationFieldOf } from "../../test/helpers/validation.js";
import { isRetryable, RETRY_WINDOW_MS, retryDelayMs, validateRetryPolicy } from "./run-retries.js";

describe("retryDelayMs", () => {
  const exponential = validateRetryPolicy({ max: 10, backoff: "exponential", delay_ms: 1000, max_delay_ms: 10_000 }, "settings.retries");
  const fixed = validateRetryPolicy({ max: 10, backoff: "fixed", delay_ms: 1000 }, "settings.retries");

  it("doubles the delay per attempt when exponential, up to max_delay_ms; the jitter's middle is the delay itself", () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => retryDelayMs(exponential, attempt, 0.5))).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect([1, 2, 3].map((attempt) => retryDelayMs(fixed, attempt, 0.5))).toEqual([1000, 1000, 1000]);
  });

  it("jitters by ±20%, never past max_delay_ms", () => {
    expect(retryDelayMs(exponential, 1, 0)).toBe(800);
    expect(retryDelayMs(exponential, 1, 0.999_999)).toBe(1200);
    expect(retryDelayMs(exponential, 4, 0.999_999)).toBe(9600);
    expect(retryDelayMs(exponential, 5, 0)).toBe(10_000);
    expect(retryDelayMs(exponential, 5, 0.999_999)).toBe(10_000);
  });

  it("stays finite for the last of 100 retries", () => {
    const many = validateRetryPolicy({ max: 100, delay_ms: 1, max_delay_ms: RETRY_WINDOW_MS }, "settings.retries");
    expect(retryDelayMs(many, 100, 0.5)).toBe(RETRY_WINDOW_MS);
  });
});

describe("validateRetryPolicy", () => {
  it("fills the defaults: 3 retries, exponential, from 1 s up to an hour", () => {
    expect(validateRetryPolicy({}, "settings.retries")).toEqual({ max: 3, backoff: "exponential", delayMs: 1000, maxDelayMs: 3_600_000 });
    expect(validateRetryPolicy({ delay_ms: 7_200_000 }, "x").maxDelayMs).toBe(7_200_000);
  });

  it.each([
    [{ max: 101 }, "settings.retries.max"],
    [{ max: "3" }, "settings.retries.max"],
    [{ backoff: "linear" }, "settings.retries.backoff"],
    [{ delay_ms: RETRY_WINDOW_MS + 1 }, "settings.retries.delay_ms"],
    [{ max_delay_ms: -1 }, "settings.retries.max_delay_ms"],
    [{ delay_ms: 10, max_delay_ms: 5 }, "settings.retries.max_delay_ms"],
    [{ jitter: 0 }, "settings.retries.jitter"],
    [[], "settings.retries"],
  ])("refuses %j naming %s", (value, field) => {
    expect(validationFieldOf(() => validateRetryPolicy(value, "settings.retries"))).toBe(field);
  });
});

describe("isRetryable", () => {
  it("retries every error but configuration and account problems, unless the error says otherwise", () => {
    expect(isRetryable({ code: "UserError", name: "Error" })).toBe(true);
    expect(isRetryable({ code: "Timeout", name: "Timeout" })).toBe(true);
    expect(isRetryable({ code: "ConfigurationError", name: "ConfigurationError" })).toBe(false);
    expect(isRetryable({ code: "AuthError", name: "AuthError" })).toBe(false);
    expect(isRetryable({ code: "UserError", name: "ConfigurationError" })).toBe(false);
    expect(isRetryable({ code: "RepeatedCrash", name: "RepeatedCrash" })).toBe(false);
    expect(isRetryable({ code: "UserError", name: "Error", retryable: false })).toBe(false);
    expect(isRetryable({ code: "AuthError", name: "AuthError", retryable: true })).toBe(true);
  });
});
