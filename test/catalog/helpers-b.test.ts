import { createHash, createHmac } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CATALOG_ROOT } from "../../src/catalog/bundle-catalog.js";
import { createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { runAction, saveActionWorkflow } from "./catalog-b-harness.js";

/**
 * The catalog's helper_functions (data conversion, hashing, text, lists,
 * numbers, exports), each run as a workflow step on a real server with real
 * inputs, and with its bad inputs: a refusal at save naming the prop, or a
 * failed run whose message names it.
 */

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = (await createUser(server, "helper")).key;
});
afterAll(() => server.close());

const A = (slug: string) => `helper_functions/actions/${slug}/${slug}.mjs`;

/** The step's return value of a successful run. */
async function returned(slug: string, props: Record<string, unknown>, event: unknown = {}): Promise<any> {
  const run = await runAction(server, key, A(slug), props, event);
  expect(run.status, JSON.stringify(run.error)).toBe("success");
  return run.steps[0].$return_value;
}

/** The error message of a run that must fail. */
async function failure(slug: string, props: Record<string, unknown>, event: unknown = {}): Promise<string> {
  const run = await runAction(server, key, A(slug), props, event);
  expect(run.status).toBe("error");
  return run.error.msg;
}

describe.concurrent("helper_functions (catalog-b)", () => {
  it("JSON to CSV: objects with a header, columns chosen, nested values as JSON, quoting; bad data named", async () => {
    const rows = [
      { id: 1, name: "Ada, Countess", tags: ["a", "b"] },
      { id: 2, name: 'Said "hi"', extra: true },
    ];
    expect(await returned("json-to-csv", { data: "{{steps.trigger.event.rows}}" }, { rows })).toBe(
      'id,name,tags,extra\n1,"Ada, Countess","[""a"",""b""]",\n2,"Said ""hi""",,true\n',
    );
    expect(await returned("json-to-csv", { data: JSON.stringify(rows), columns: ["name", "id"], header: false, delimiter: ";" })).toBe('Ada, Countess;1\n"Said ""hi""";2\n');
    expect(await failure("json-to-csv", { data: "{{steps.trigger.event.rows}}" }, { rows: { id: 1 } })).toContain('Prop "data" must be a list of objects; got an object');
    expect(await failure("json-to-csv", { data: "{{steps.trigger.event.rows}}" }, { rows: [{ id: 1 }, 7] })).toContain("item 1 is a number");
    expect(await failure("json-to-csv", { data: "not json" })).toContain('Prop "data" is text that is not JSON');
  });

  it("CSV to JSON: header rows to objects, quoted fields, a BOM, rows as lists; malformed CSV named with its line", async () => {
    const csv = '\uFEFFid,name\n1,"Lovelace, Ada"\n2,"multi\nline"\n';
    expect(await returned("csv-to-json", { csv: "{{steps.trigger.event.csv}}" }, { csv })).toEqual([
      { id: "1", name: "Lovelace, Ada" },
      { id: "2", name: "multi\nline" },
    ]);
    expect(await returned("csv-to-json", { csv: "a; b\nc ;d", header: false, delimiter: ";", trim: true })).toEqual([
      ["a", "b"],
      ["c", "d"],
    ]);
    const message = await failure("csv-to-json", { csv: 'id,name\n1,"open quote\n' });
    expect(message).toMatch(/Prop "csv" is not CSV this action can read: .*(quote|line)/i);
    expect(await failure("csv-to-json", { csv: "a,b\n1,2,3\n" })).toContain('Prop "csv"');
  });

  it("XML to JSON: elements, attributes, repeated children, values parsed or kept as text; malformed XML named with its line", async () => {
    const xml = '<?xml version="1.0"?>\n<order id="7"><item sku="a">2</item><item sku="b">3</item><note>ok &amp; done</note></order>';
    expect(await returned("xml-to-json", { input: xml })).toMatchObject({
      order: { "@_id": 7, item: [{ "#text": 2, "@_sku": "a" }, { "#text": 3, "@_sku": "b" }], note: "ok & done" },
    });
    expect((await returned("xml-to-json", { input: xml, attributes: false, parseValues: false })).order).toEqual({ item: ["2", "3"], note: "ok & done" });
    expect(await failure("xml-to-json", { input: "<a>\n<b></a>" })).toMatch(/Prop "input" is not well-formed XML: .*\(line 2, column \d+\)/);
    const lol = '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "ha"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]><l><one>&a;</one><many>&c;</many></l>';
    expect((await returned("xml-to-json", { input: lol })).l).toEqual({ one: "ha", many: "&c;" });
  });

  it("base64: encodes and decodes text (plain and URL-safe) and hex; refuses what is not base64", async () => {
    const text = "héllo? ünïcode >>~";
    const plain = await returned("base64-encode-string", { data: text });
    expect(plain).toBe(Buffer.from(text).toString("base64"));
    const urlSafe = await returned("base64-encode-string", { data: text, urlSafe: true });
    expect(urlSafe).toBe(Buffer.from(text).toString("base64url"));
    expect(await returned("base64-decode-string", { data: plain })).toBe(text);
    expect(await returned("base64-decode-string", { data: urlSafe })).toBe(text);
    expect(await returned("base64-decode-string", { data: "3q2+7w==", outputFormat: "hex" })).toBe("deadbeef");
    expect(await failure("base64-decode-string", { data: "not base64!" })).toContain('Prop "data" is not base64');
    const refused = await saveActionWorkflow(server, key, A("base64-decode-string"), { data: "eA==", outputFormat: "latin9" });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details?.field ?? refused.body.error.message).toContain("outputFormat");
  });

  it("hash and HMAC: every algorithm, hex and base64, equal to node's own; an unknown algorithm is refused at save", async () => {
    const data = "The quick brown fox";
    for (const algorithm of ["md5", "sha1", "sha256", "sha512"]) {
      expect(await returned("create-hash", { data, algorithm })).toBe(createHash(algorithm).update(data).digest("hex"));
    }
    expect(await returned("create-hash", { data, encoding: "base64" })).toBe(createHash("sha256").update(data).digest("base64"));
    expect(await returned("create-hmac", { data, secret: "s3cr3t" })).toBe(createHmac("sha256", "s3cr3t").update(data).digest("hex"));
    expect(await returned("create-hmac", { data, secret: "s3cr3t", algorithm: "sha1", encoding: "base64" })).toBe(createHmac("sha1", "s3cr3t").update(data).digest("base64"));
    const refused = await saveActionWorkflow(server, key, A("create-hash"), { data, algorithm: "crc32" });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.error)).toContain("algorithm");
    expect(await failure("create-hmac", { data, secret: "" })).toContain('Prop "secret" is empty');
  });

  it("random integer: within min and max, both reachable; min above max named", async () => {
    const seen = new Set<number>();
    const picks = await Promise.all(Array.from({ length: 12 }, () => returned("random-integer", { min: 4, max: 5 })));
    for (const pick of picks) {
      expect([4, 5]).toContain(pick);
      seen.add(pick);
    }
    expect(seen.size).toBe(2); // 12 draws of two values: both appear, but for a 1-in-2048 chance
    expect(await returned("random-integer", { min: -3, max: -3 })).toBe(-3);
    expect(await failure("random-integer", { min: 10, max: 1 })).toContain('Prop "min" (10) is greater than prop "max" (1)');
    const refused = await saveActionWorkflow(server, key, A("random-integer"), { min: 1.5 });
    expect(refused.status).toBe(400);
  });

  it("regex extract: every match with its index, numbered and named groups, flags; a bad pattern or flag is named", async () => {
    const matches = await returned("extract-by-regular-expression", { text: "Order 12 and ORDER 345.", pattern: "order (?<id>\\d+)", flags: "i" });
    expect(matches).toEqual([
      { match: "Order 12", index: 0, groups: ["12"], named: { id: "12" } },
      { match: "ORDER 345", index: 13, groups: ["345"], named: { id: "345" } },
    ]);
    expect(await returned("extract-by-regular-expression", { text: "none here", pattern: "\\d+" })).toEqual([]);
    expect(await failure("extract-by-regular-expression", { text: "x", pattern: "(unclosed" })).toContain('Prop "pattern" is not a valid regular expression');
    expect(await failure("extract-by-regular-expression", { text: "x", pattern: "x", flags: "q" })).toContain('Prop "flags" is "q"');
  });

  it("text case and trim: each case, each trim, collapsed spaces", async () => {
    const text = "  hello wonderful World. second  sentence  ";
    const cases: Record<string, string> = {
      unchanged: "hello wonderful World. second  sentence",
      lower: "hello wonderful world. second  sentence",
      upper: "HELLO WONDERFUL WORLD. SECOND  SENTENCE",
      title: "Hello Wonderful World. Second  Sentence",
      sentence: "Hello wonderful world. Second  sentence",
      camel: "helloWonderfulWorldSecondSentence",
      snake: "hello_wonderful_world_second_sentence",
      kebab: "hello-wonderful-world-second-sentence",
    };
    const results = await Promise.all(Object.keys(cases).map((textCase) => returned("change-case-and-trim", { text, textCase })));
    expect(Object.fromEntries(Object.keys(cases).map((textCase, index) => [textCase, results[index]]))).toEqual(cases);
    expect(await returned("change-case-and-trim", { text: "orderItemID value", textCase: "snake" })).toBe("order_item_id_value");
    expect(await returned("change-case-and-trim", { text, trim: "start", collapseSpaces: true })).toBe("hello wonderful World. second sentence ");
    expect(await returned("change-case-and-trim", { text: " a ", trim: "none" })).toBe(" a ");
    const refused = await saveActionWorkflow(server, key, A("change-case-and-trim"), { text, textCase: "shouting" });
    expect(refused.status).toBe(400);
  });

  it("compare lists: added, removed and common, objects by value whatever their key order; not a list is named", async () => {
    expect(
      await returned("compare-arrays", { array1: "{{steps.trigger.event.before}}", array2: "{{steps.trigger.event.after}}" }, {
        before: ["a", "b", { id: 1, n: "x" }, "b"],
        after: ["b", "c", { n: "x", id: 1 }],
      }),
    ).toEqual({ added: ["c"], removed: ["a"], common: ["b", { id: 1, n: "x" }] });
    expect(await returned("compare-arrays", { array1: "[1,2]", array2: "[2,3]" })).toEqual({ added: [3], removed: [1], common: [2] });
    expect(await failure("compare-arrays", { array1: "{{steps.trigger.event.x}}", array2: "[]" }, { x: { a: 1 } })).toContain('Prop "array1" must be a list');
  });

  it("math on numbers: sum, average, median, min, max, product, round (numbers and numeric text); a non-number is named", async () => {
    const numbers = [1.005, "2.5", 10, -3];
    const ops = { sum: 10.505, average: 2.62625, median: 1.7525, min: -3, max: 10, product: -75.375 };
    for (const [operation, expected] of Object.entries(ops)) {
      expect(await returned("math-on-numbers", { numbers: "{{steps.trigger.event.n}}", operation }, { n: numbers })).toBeCloseTo(expected, 10);
    }
    expect(await returned("math-on-numbers", { numbers: "{{steps.trigger.event.n}}", operation: "round", decimals: 2 }, { n: numbers })).toEqual([1.01, 2.5, 10, -3]);
    expect(await returned("math-on-numbers", { numbers: "[1, 2, 2]", operation: "average", decimals: 3 })).toBe(1.667);
    expect(await failure("math-on-numbers", { numbers: "{{steps.trigger.event.n}}" }, { n: [1, "two"] })).toContain('item 1 ("two") is not a number');
    expect(await failure("math-on-numbers", { numbers: "[]", operation: "max" })).toContain("empty list");
  });

  it("export variables: each name is an export later steps read; a reserved name is named", async () => {
    const run = await runAction(server, key, A("export-variables"), { config: { customer: "{{steps.trigger.event.who}}", limit: 10, nested: { ok: true } } }, { who: "Ada" });
    expect(run.status).toBe("success");
    expect(run.steps[0].exports).toMatchObject({ customer: "Ada", limit: 10, nested: { ok: true } });
    // Also as one object, as the hosted action exports it.
    expect(run.steps[0].exports.config).toEqual({ customer: "Ada", limit: 10, nested: { ok: true } });
    expect(await failure("export-variables", { config: { $summary: "x" } })).toContain('the name "$summary"');
  });
});

describe("catalog-b's component files", () => {
  const FILES = [
    ...["json-to-csv", "csv-to-json", "xml-to-json", "base64-encode-string", "base64-decode-string", "create-hash", "create-hmac", "random-integer", "extract-by-regular-expression", "change-case-and-trim", "compare-arrays", "math-on-numbers", "export-variables"].map(
      (slug) => `helper_functions/actions/${slug}/${slug}.mjs`,
    ),
    ...["add-update-record", "get-record-or-create", "delete-single-record", "list-keys", "increment-counter", "append-to-record"].map((slug) => `data_stores/actions/${slug}/${slug}.mjs`),
    "data_stores/sources/new-or-changed-key/new-or-changed-key.mjs",
    "email/actions/send-email-to-self/send-email-to-self.mjs",
    "email/actions/send-email-with-smtp/send-email-with-smtp.mjs",
    "email/sources/new-email/new-email.mjs",
  ];

  it("follow the catalog's layout: key <app>-<folder slug>, the type of their folder, a semantic version, a description, every prop labelled and described", async () => {
    for (const file of FILES) {
      const [app, kind, slug] = file.split("/");
      const component = (await import(/* @vite-ignore */ pathToFileURL(resolve(CATALOG_ROOT, file!)).href)).default;
      expect(component.key, file).toBe(`${app}-${slug}`);
      expect(component.type, file).toBe(kind === "sources" ? "source" : "action");
      expect(component.version, file).toMatch(/^\d+\.\d+\.\d+$/);
      expect(component.description, file).toMatch(/^[A-Z].{20,}\.$/s);
      for (const [name, prop] of Object.entries<any>(component.props)) {
        expect(typeof prop, `${file}: ${name}`).toBe("object");
        expect(prop.label, `${file}: ${name}`).toEqual(expect.any(String));
        expect(prop.description, `${file}: ${name}`).toEqual(expect.any(String));
      }
    }
  });
});
