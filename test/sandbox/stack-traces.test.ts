import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FixtureRegistry } from "../../src/bench/fixture-registry.js";
import { deployAndRun, startNpmFixture } from "../helpers/npm-registry.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventually, logsOf } from "../helpers/sources.js";
import { fire } from "../workflows/error-helpers.js";
import { createWorkflow, errorsOf, waitFor } from "../workflows/helpers.js";

/**
 * Stack traces name the lines the author wrote: frames in the bundle are
 * mapped through its source map, and no path of the server is in any stack,
 * log line or `$errors` event (issue 14, item 9).
 */
let registry: FixtureRegistry;
let server: TestServer;
beforeAll(async () => {
  registry = await startNpmFixture("/nonexistent/marker");
  server = await startTestServer({ RUNNEL_NPM_REGISTRY: registry.url });
});
afterAll(async () => {
  await server?.close();
  await registry?.close();
});

/** Nothing of where the server keeps its files: the data folder, temporary folders, the built server, the runner's bundle. */
function expectNoServerPath(text: string): void {
  expect(text).not.toContain(server.dataDir);
  expect(text).not.toContain("/tmp/");
  expect(text).not.toContain("dist/");
  expect(text).not.toContain("runner.cjs");
  expect(text).not.toContain("component.cjs");
  expect(text).not.toContain(process.cwd());
  expect(text).not.toMatch(/\(\/|at \/|file:\/\//);
}

// TypeScript, with lines before the throw that esbuild removes (the interface) or moves: only a source map finds line 9.
const TYPESCRIPT_SOURCE = `interface Order {
  id: number;
  total: number;
}

function check(order: Order): void {
  const limit: number = 10;
  if (order.total > limit) {
    throw new RangeError("order " + order.id + " is over the limit");
  }
}

export default {
  name: "Stacks", version: "1",
  props: { http: { type: "$.interface.http" } },
  async run(event: { query: Record<string, string> }) {
    if (event.query.log === "1") {
      try { check({ id: 2, total: 30 }); } catch (error) { console.error((error as Error).stack); }
      return;
    }
    check({ id: 1, total: 20 });
  },
};
`;

describe("a source's stack traces", () => {
  let source: { id: string; endpoint_url: string };
  beforeAll(async () => {
    source = await deploySource(server, server.adminKey, { component_code: TYPESCRIPT_SOURCE, filename: "orders.ts" });
  });

  it("name the component's file, line and column where the run threw, with no path of the server", async () => {
    expect((await fetch(source.endpoint_url, { method: "POST" })).status).toBe(502);
    const stack = await eventually(async () => (await logsOf(server, server.adminKey, source.id)).find((text) => text.includes("order 1 is over the limit")), 10_000, "the error's log");
    expect(stack).toContain("RangeError: order 1 is over the limit");
    // `new RangeError` on line 9, column 11; then the caller, run, on line 21.
    expect(stack).toMatch(/at check \(orders\.ts:9:11\)/);
    expect(stack).toMatch(/orders\.ts:21:5\)/);
    expectNoServerPath(stack);
  });

  it("maps a stack the component prints itself", async () => {
    expect((await fetch(`${source.endpoint_url}?log=1`, { method: "POST" })).status).toBe(200);
    const printed = await eventually(async () => (await logsOf(server, server.adminKey, source.id)).find((text) => text.includes("order 2 is over the limit")), 10_000, "the printed stack");
    expect(printed).toMatch(/at check \(orders\.ts:9:11\)/);
    expect(printed).toMatch(/orders\.ts:18:13\)/);
    expectNoServerPath(printed);
  });
});

it("map a fault after the call ended (a timer that throws) in the source's logs", async () => {
  const code = `export default {\n  name: "Late", version: "1",\n  async run() {\n    setTimeout(() => {\n      throw new Error("late trouble");\n    }, 20);\n  },\n};\n`;
  const { source } = await deployAndRun(server, code, { filename: "late.ts" });
  const line = await eventually(async () => (await logsOf(server, server.adminKey, source.id)).find((text) => text.includes("late trouble")), 10_000, "the late fault");
  expect(line).toMatch(/late\.ts:5:13\)?/);
  expectNoServerPath(line);
});

describe("a workflow step's stack traces", () => {
  it("name the second step's own file and line in the `$errors` event", async () => {
    const workflow = await createWorkflow(server, server.adminKey, {
      name: "Stacks",
      trigger: { type: "http" },
      steps: [
        { name: "first", code: "export default defineComponent({ async run() { return { ok: true }; } })" },
        {
          name: "second",
          filename: "second.ts",
          code: `type Input = { n: number };\n\nexport default defineComponent({\n  async run() {\n    const input: Input = { n: 3 };\n    throw new Error("step two failed with " + input.n);\n  },\n});\n`,
        },
      ],
    });
    await fire(workflow.trigger.endpoint_url, {});
    const listed = await waitFor(() => errorsOf(server, server.adminKey, workflow.id), (body) => body.data.length === 1, "the error");
    const error = listed.data[0].event.error;
    expect(error.msg).toBe("step two failed with 3");
    expect(error.stack).toMatch(/second\.ts:6:11/);
    expectNoServerPath(JSON.stringify(listed));
  });
});

describe("a packaged import's stack traces", () => {
  it("keep the package's frame as a relative node_modules path", async () => {
    // padStart cannot take a BigInt: leftpad throws from its own file.
    const code = `import leftpad from "leftpad@1.0.0";\nexport default { name: "Pad", version: "1", async run() {\n  this.$emit({ padded: leftpad("a", 3n) });\n} };\n`;
    const { source, run } = await deployAndRun(server, code, { filename: "pad.mjs" });
    expect(run.events ?? []).toEqual([]);
    const logs = (await logsOf(server, server.adminKey, source.id)).join("\n");
    expect(logs).toContain("TypeError");
    // esbuild may rename the function (leftpad2); the file is the package's own.
    expect(logs).toMatch(/at leftpad\d* \(node_modules\/leftpad\/index\.js:1:\d+\)/);
    expect(logs).toMatch(/pad\.mjs:3:\d+\)/);
    expectNoServerPath(logs);
    expectNoServerPath(JSON.stringify(run));
  });
});

it("the API answers with the mapped stack too", async () => {
  const saved = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: `export default { name: "T", version: "1", async run() {\n\n  throw new Error("at line three");\n} };\n`, filename: "t.js" } });
  expect(saved.status).toBe(200);
  const run = await call(server.url, "POST", `/v1/sources/${saved.body.data.id}/run`, { key: server.adminKey, json: {} });
  const text = JSON.stringify(run.body);
  expect(text).toContain("at line three");
  expectNoServerPath(text);
});
