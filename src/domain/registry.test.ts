import { describe, expect, it } from "vitest";
import { ValidationError } from "./errors.js";
import { checkRegistryKey, checkRegistryVersion, newestEntry, searchRegistry, sortEntries } from "./registry.js";
import { validationFieldOf as fieldOf } from "../../test/helpers/validation.js";

describe("checkRegistryKey", () => {
  it.each(["github-new-issue", "slack-send-message", "x", "a1-b2-c3", "0-9", "rss", "helper_functions-random-integer", "google_sheets-add_row"])("accepts %j", (key) => {
    expect(checkRegistryKey(key)).toBe(key);
  });

  it.each([
    ["missing", undefined],
    ["null", null],
    ["empty", ""],
    ["upper case", "GitHub-new-issue"],
    ["a space", "github new-issue"],
    ["a leading underscore", "_github-new-issue"],
    ["an underscore ending a word", "github_-new-issue"],
    ["an underscore beside a dash", "github-_new-issue"],
    ["a double underscore", "helper__functions-x"],
    ["a dot", "github.new-issue"],
    ["a slash", "github/new-issue"],
    ["a leading dash", "-github"],
    ["a trailing dash", "github-"],
    ["a double dash", "github--issue"],
    ["an accent", "café-new"],
    ["too long", "a".repeat(101)],
  ])("refuses %s, naming key", (_title, key) => {
    expect(fieldOf(() => checkRegistryKey(key))).toBe("key");
  });

  it("suggests a key from the component's name when there is none", () => {
    expect(() => checkRegistryKey(null, "Send Message!")).toThrow(/key such as "send-message"/);
  });
});

describe("checkRegistryVersion", () => {
  it.each(["0.0.1", "1.0.0", "1.10.0", "2.0.0-beta.1", "10.20.30-rc.1.x"])("accepts %j", (version) => {
    expect(checkRegistryVersion(version)).toBe(version);
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["two parts", "1.0"],
    ["one part", "1"],
    ["a v prefix", "v1.0.0"],
    ["spaces", " 1.0.0 "],
    ["build metadata", "1.0.0+build.5"],
    ["a leading zero", "01.0.0"],
    ["a range", "^1.0.0"],
    ["words", "latest"],
    ["too long", `1.0.0-${"a".repeat(100)}`],
  ])("refuses %s, naming version", (_title, version) => {
    expect(fieldOf(() => checkRegistryVersion(version))).toBe("version");
  });

  it("says what a semantic version looks like", () => {
    expect(() => checkRegistryVersion("1.0")).toThrow(ValidationError);
    expect(() => checkRegistryVersion("1.0")).toThrow(/semantic version such as "1\.0\.0"/);
  });
});

describe("newestEntry", () => {
  const entries = (...versions: string[]) => versions.map((version) => ({ version }));
  it.each([
    ["none", [], null],
    ["one", ["1.0.0"], "1.0.0"],
    ["by precedence, not text", ["1.9.0", "1.10.0", "1.2.0"], "1.10.0"],
    ["patch levels", ["0.0.9", "0.0.10"], "0.0.10"],
    ["a release over a newer pre-release", ["1.9.0", "2.0.0-beta.1"], "1.9.0"],
    ["a release over its own pre-release", ["2.0.0-rc.1", "2.0.0"], "2.0.0"],
    ["the highest pre-release when there is no release", ["1.0.0-alpha", "1.0.0-beta.2", "1.0.0-beta.10"], "1.0.0-beta.10"],
  ])("%s", (_title, versions, expected) => {
    expect(newestEntry(entries(...versions))?.version ?? null).toBe(expected);
  });
});

describe("sortEntries", () => {
  it("sorts keys alphabetically and each key's versions newest first", () => {
    const sorted = sortEntries([
      { key: "b", version: "1.9.0" },
      { key: "a", version: "0.1.0" },
      { key: "b", version: "1.10.0" },
      { key: "b", version: "1.10.0-beta" },
    ]);
    expect(sorted.map((entry) => `${entry.key}@${entry.version}`)).toEqual(["a@0.1.0", "b@1.10.0", "b@1.10.0-beta", "b@1.9.0"]);
  });
});

describe("searchRegistry", () => {
  const entry = (key: string, kind: "source" | "action", version = "1.0.0") => ({ ownerId: "u", key, version, componentId: "sc_x", kind, publishedAt: 0 });
  const entries = [
    entry("google_sheets-new-row", "source"),
    entry("google_sheets-new-row", "source", "0.9.0"),
    entry("google_sheets-add-row", "action"),
    entry("slack-send-message", "action"),
    entry("http-new-request", "source"),
  ];

  it("finds keys by the words of the query, best first, one per key", () => {
    expect(searchRegistry(entries, { query: "new row" })).toEqual({ sources: ["google_sheets-new-row", "http-new-request"], actions: ["google_sheets-add-row"] });
    expect(searchRegistry(entries, { query: "Send a message to Slack" })).toEqual({ sources: [], actions: ["slack-send-message"] });
  });

  it("filters by app and by the share of words a key must hold", () => {
    expect(searchRegistry(entries, { query: "new row", app: "google_sheets" })).toEqual({ sources: ["google_sheets-new-row"], actions: ["google_sheets-add-row"] });
    expect(searchRegistry(entries, { query: "new row", threshold: 1 })).toEqual({ sources: ["google_sheets-new-row"], actions: [] });
    expect(searchRegistry(entries, { query: "nothing matches" })).toEqual({ sources: [], actions: [] });
  });
});
