/**
 * fast-check arbitraries for requests to the operations an OpenAPI document
 * describes: path parameters from a pool of real and junk ids, queries and
 * JSON bodies shaped by their schemas with wrong and hostile values mixed
 * in, and callers with and without a key.
 */
import fc from "fast-check";

type Schema = Record<string, any>;

export interface Operation {
  method: string;
  /** The path as documented, `/v1/sources/{id}`. */
  template: string;
  pathParams: string[];
  query: Array<{ name: string; schema: Schema }>;
  body: Schema | null;
}

export interface FuzzRequest {
  method: string;
  template: string;
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
  caller: "owner" | "other" | "nobody" | "bad key";
}

export interface Pools {
  ids: string[];
  keys: { owner: string; other: string };
}

/** Operations to fuzz: all but the live streams (SSE: `…/sse`, and the hosted addresses under `/sse/`), which never end by themselves. */
export function operationsOf(document: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Schema>(document.paths ?? {})) {
    if (template.endsWith("/sse") || template.startsWith("/sse/")) continue;
    for (const [method, operation] of Object.entries<Schema>(item)) {
      if (!["get", "post", "put", "delete", "patch"].includes(method)) continue;
      const parameters: Schema[] = operation.parameters ?? [];
      operations.push({
        method: method.toUpperCase(),
        template,
        pathParams: parameters.filter((parameter) => parameter.in === "path").map((parameter) => parameter.name),
        query: parameters.filter((parameter) => parameter.in === "query").map((parameter) => ({ name: parameter.name, schema: parameter.schema ?? {} })),
        body: operation.requestBody?.content?.["application/json"]?.schema ?? null,
      });
    }
  }
  return operations;
}

const NASTY_STRINGS = [
  "",
  " ",
  "../../etc/passwd",
  "%00",
  "\u0000",
  "' OR 1=1 --",
  "<script>alert(1)</script>",
  "{{steps.trigger.event}}",
  "__proto__",
  "constructor",
  "enc:v1:AAAA.BBBB.CCCC",
  "🙂".repeat(50),
  "a".repeat(5_000),
  "p_*",
  "dc_*",
  "$errors",
  "-1",
  "1e309",
  "null",
  "module.exports = { name: 'x', run() {} }",
  "module.exports = { name: 'y', version: '1.0.0', props: { http: { type: '$.interface.http' } }, run() { this.$emit(1); } }",
  "export default defineComponent({ run() { return 1; } })",
  "import x from 'left-pad'; export default { name: 'z', run() {} }",
];

function stringValue(pools: Pools): fc.Arbitrary<string> {
  return fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) }, { weight: 2, arbitrary: fc.constantFrom(...pools.ids) });
}

const deepJson = fc.integer({ min: 50, max: 5_000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth));

/** A value for `schema`, or (now and then) one of the wrong type. */
function valueFor(schema: Schema, pools: Pools, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.jsonValue({ maxDepth: 2 });
  if (depth > 3) return wrong;
  const variants: Array<fc.Arbitrary<unknown>> = [];
  for (const choice of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) variants.push(valueFor(choice, pools, depth + 1));
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  for (const type of types) {
    if (type === "string") variants.push(schema.enum ? fc.constantFrom(...schema.enum) : stringValue(pools));
    else if (type === "integer" || type === "number") variants.push(fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constantFrom(0, -1, 2 ** 53, 1e12, 3.5)));
    else if (type === "boolean") variants.push(fc.boolean());
    else if (type === "null") variants.push(fc.constant(null));
    else if (type === "array") variants.push(fc.array(valueFor(schema.items ?? {}, pools, depth + 1), { maxLength: 3 }));
    else if (type === "object") {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const shaped: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(properties)) shaped[name] = valueFor(property, pools, depth + 1);
      variants.push(
        // Now and then a field the schema does not know: bodies are strict, and must say so.
        fc.tuple(fc.record(shaped, { requiredKeys: [] }), fc.dictionary(fc.string({ maxLength: 8 }), wrong, { maxKeys: 1 }), fc.integer({ min: 0, max: 9 })).map(([known, extra, dice]) => ({ ...known, ...(dice === 0 ? extra : {}) })),
      );
    }
  }
  if (schema.const !== undefined) variants.push(fc.constant(schema.const));
  if (variants.length === 0) return wrong;
  return fc.oneof({ weight: 9, arbitrary: fc.oneof(...variants) }, { weight: 1, arbitrary: wrong });
}

function bodyFor(schema: Schema, pools: Pools): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: valueFor(schema, pools).map((value) => JSON.stringify(value) ?? "null") },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value) ?? "null") },
    { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 30 }), deepJson, fc.constant("{"), fc.constant('{"a":')) },
  );
}

function queryFor(operation: Operation, pools: Pools): fc.Arbitrary<string> {
  const parts = operation.query.map((parameter) =>
    fc.option(
      valueFor(parameter.schema, pools).map((value) => `${encodeURIComponent(parameter.name)}=${encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value) ?? "")}`),
      { nil: null, freq: 2 },
    ),
  );
  const extra = fc.option(fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`), { nil: null, freq: 6 });
  return fc.tuple(fc.tuple(...parts), extra).map(([given, more]) => [...given, more].filter((part): part is string => part !== null).join("&"));
}

function requestFor(operation: Operation, pools: Pools): fc.Arbitrary<FuzzRequest> {
  const pathValue = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...pools.ids) }, { weight: 3, arbitrary: stringValue(pools) }, { weight: 1, arbitrary: fc.integer().map(String) });
  // Only the other user writes: the owner's resources must stay for the leak checks; the owner reads.
  const caller = operation.method === "GET" ? fc.constantFrom<FuzzRequest["caller"]>("other", "other", "other", "owner", "nobody", "bad key") : fc.constantFrom<FuzzRequest["caller"]>("other", "other", "other", "nobody", "bad key");
  const contentType = fc.constantFrom("application/json", "application/json", "application/json", "text/plain", "application/x-www-form-urlencoded");
  return fc
    .record({
      params: fc.tuple(...operation.pathParams.map(() => pathValue)),
      query: queryFor(operation, pools),
      body: operation.body ? fc.option(bodyFor(operation.body, pools), { nil: undefined, freq: 8 }) : fc.constant(undefined),
      caller,
      contentType,
    })
    .map(({ params, query, body, caller, contentType: type }) => {
      let path = operation.template;
      operation.pathParams.forEach((name, index) => (path = path.replace(`{${name}}`, encodeURIComponent(params[index] ?? "x") || "x")));
      const headers: Record<string, string> = {};
      if (caller === "owner") headers.authorization = `Bearer ${pools.keys.owner}`;
      else if (caller === "other") headers.authorization = `Bearer ${pools.keys.other}`;
      else if (caller === "bad key") headers.authorization = "Bearer rnl_notarealkeynotarealkeynotarealkeynotareal1";
      if (body !== undefined) headers["content-type"] = type;
      return { method: operation.method, template: operation.template, path: query ? `${path}?${query}` : path, headers, body, caller };
    });
}

/** A request to any of the operations, chosen evenly. */
export function apiRequest(operations: Operation[], pools: Pools): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(...operations.map((operation) => requestFor(operation, pools)));
}
