import { describe, expect, it } from "vitest";
import { checkPropValue, isAmongOptions, isPlainObject, normalizeTimer, type ValueRules } from "./prop-values.js";

const rules = (type: string, extra: Partial<ValueRules> = {}): ValueRules => {
  const isArray = type.endsWith("[]");
  return { baseType: (isArray ? type.slice(0, -2) : type) as ValueRules["baseType"], isArray, ...extra };
};

describe("checkPropValue", () => {
  it.each([
    ["boolean", false],
    ["integer", -3],
    ["string", ""],
    ["object", { a: [1] }],
    ["any", null],
    ["any", [1, "x"]],
    ["data_store", "cache"],
    ["http_request", { method: "POST", url: "https://example.com", body: { a: 1 } }],
    ["http_request", {}],
    ["string[]", ["a", "b"]],
    ["integer[]", []],
    ["boolean[]", [true, false]],
  ])("%s accepts %j", (type, value) => {
    expect(checkPropValue(rules(type), value)).toBeNull();
  });

  it.each([
    ["boolean", "true", /must be true or false; got a string/],
    ["integer", 1.5, /must be a whole number; got 1.5/],
    ["integer", "5", /must be a whole number; got a string/],
    ["integer", 2 ** 60, /must be a whole number/],
    ["string", 5, /must be a string; got 5/],
    ["object", [1], /must be a JSON object; got an array/],
    ["object", null, /must be a JSON object; got null/],
    ["any", undefined, /must be a JSON value/],
    ["data_store", "", /name of a data store/],
    ["http_request", "https://example.com", /must be a JSON object describing a request/],
    ["http_request", { url: 5 }, /url must be a string/],
    ["string[]", "a", /must be a list \(JSON array\) of strings; got a string/],
    ["string[]", ["a", 2], /item 1 must be a string; got 2/],
    ["integer[]", [1.5], /item 0 must be a whole number; got 1.5/],
    ["$.service.db", {}, /takes no configured value/],
  ])("%s refuses %j", (type, value, message) => {
    expect(checkPropValue(rules(type), value)).toMatch(message);
  });

  it.each([
    [{ min: 1 }, 1, null],
    [{ min: 1 }, 0, /at least 1; got 0/],
    [{ max: 10 }, 10, null],
    [{ max: 10 }, 11, /at most 10; got 11/],
  ])("integer %j with %j", (range, value, expected) => {
    const problem = checkPropValue(rules("integer", range), value);
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toMatch(expected);
  });

  it("checks min and max on each item of an integer[]", () => {
    expect(checkPropValue(rules("integer[]", { min: 1 }), [3, 0])).toMatch(/item 1 must be at least 1/);
  });
});

describe("isPlainObject", () => {
  it.each([
    [{}, true],
    [Object.create(null), true],
    [[], false],
    [null, false],
    [new Date(0), false],
    ["x", false],
  ])("%j → %s", (value, expected) => {
    expect(isPlainObject(value)).toBe(expected);
  });
});

describe("isAmongOptions", () => {
  it.each([
    ["a", ["a", "b"], true],
    ["c", ["a", "b"], false],
    [1, [{ label: "One", value: 1 }], true],
    ["One", [{ label: "One", value: 1 }], false],
    ["1", [1], false],
    [{ id: 1 }, [{ label: "X", value: { id: 1 } }], true],
    [false, [true, false], true],
  ])("%j in %j → %s", (value, options, expected) => {
    expect(isAmongOptions(value, options)).toBe(expected);
  });
});

describe("normalizeTimer", () => {
  it.each([
    [{ intervalSeconds: 60 }, { intervalSeconds: 60 }],
    [{ interval_seconds: 900, cron: null }, { intervalSeconds: 900 }],
    [{ cron: "*/15 * * * *" }, { cron: "*/15 * * * *" }],
    [{ cron: " 0 0 * * * 1 ", intervalSeconds: null }, { cron: "0 0 * * * 1" }],
    [{ cron: "30 9 * * *", timezone: "Europe/Paris" }, { cron: "30 9 * * *", timezone: "Europe/Paris" }],
    [{ cron: "30 9 * * *", interval_seconds: null, timezone: "UTC" }, { cron: "30 9 * * *", timezone: "UTC" }],
    [{ interval_seconds: 60, cron: null, timezone: null }, { intervalSeconds: 60 }],
  ])("accepts %j", (value, expected) => {
    expect(normalizeTimer(value)).toEqual({ value: expected });
  });

  it.each([
    ["15m", /must be \{ intervalSeconds: .* \} or \{ cron: .* \}; got a string/],
    [{}, /got neither/],
    [{ intervalSeconds: 0 }, /at least 1; got 0/],
    [{ intervalSeconds: 1.5 }, /whole number of seconds/],
    [{ intervalSeconds: "60" }, /whole number of seconds/],
    [{ cron: "* * * *" }, /5 or 6 space-separated fields.*got 4/],
    [{ cron: "* * * * * * *" }, /got 7/],
    [{ cron: 5 }, /cron must be a string/],
    [{ intervalSeconds: 60, cron: "* * * * *" }, /both intervalSeconds and cron; give one/],
    [{ intervalSeconds: 60, timezone: "UTC" }, /gives a timezone with intervalSeconds; a time zone applies to a cron schedule only/],
    [{ cron: "0 9 * * *", timezone: "Mars/Olympus" }, /^timezone "Mars\/Olympus" is not a time zone this server knows; use an IANA time zone name/],
    [{ cron: "0 9 * * *", timezone: "UTC+2" }, /is an offset, not a time zone/],
    [{ cron: "0 9 * * *", timezone: " " }, /timezone is empty/],
    [{ cron: "0 9 * * *", timezone: ["Europe/Paris"] }, /timezone must be an IANA time zone name/],
    [{ cron: "0 9 * * *", tz: "Europe/Paris" }, /unknown field "tz"; a timer is .*timezone/],
  ])("refuses %j", (value, message) => {
    const result = normalizeTimer(value);
    expect("error" in result && result.error).toMatch(message);
  });
});
