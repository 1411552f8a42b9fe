import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundleComponent } from "../components/bundle.js";
import { workflowBundleLayout } from "../engine/workflows/workflow-bundle.js";
import { mapSandboxError, mapStackText, singleBundleMaps } from "./stack-mapping.js";

const folder = mkdtempSync(join(tmpdir(), "runnel-stacks-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const load = createRequire(import.meta.url);

/** A step that throws from line `line` of its own file (a blank line before it per line). */
const throwing = (message: string, line: number) => `${"\n".repeat(line - 1)}export default { run() { throw new Error(${JSON.stringify(message)}); } };\n`;

function stackOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).stack ?? "";
  }
  throw new Error("it did not throw");
}

describe("stack mapping", () => {
  it("maps each step of a workflow bundle with its own map, at its line in the combined file", async () => {
    const first = await bundleComponent({ kind: "code", code: throwing("first", 3), filename: "one.ts" }, { guardDynamicRequire: true });
    const second = await bundleComponent({ kind: "code", code: throwing("second", 7), filename: "two.ts" }, { guardDynamicRequire: true });
    const layout = workflowBundleLayout([first.code, second.code]);
    const file = join(folder, "wf", "component.cjs");
    mkdirSync(join(folder, "wf"));
    writeFileSync(file, layout.code);
    const steps = load(file).__runnelWorkflowSteps as Array<() => { default: { run(): void } }>;
    const maps = { parts: [{ fromLine: layout.startLines[0]!, map: first.map }, { fromLine: layout.startLines[1]!, map: second.map }] };
    const one = mapStackText(stackOf(() => steps[0]!().default.run()), { file, sourceMaps: maps });
    const two = mapStackText(stackOf(() => steps[1]!().default.run()), { file, sourceMaps: maps });
    expect(one).toMatch(/at Object\.run \(one\.ts:3:\d+\)/);
    expect(two).toMatch(/at Object\.run \(two\.ts:7:\d+\)/);
    for (const stack of [one, two]) {
      expect(stack).not.toContain(folder);
      // This test's own frames are files of the "server" here: dropped.
      expect(stack).not.toContain("stack-mapping.test");
    }
  });

  it("names a bundle without a map by its file alone, and takes its path out of messages", () => {
    const stack = "Error: x\n    at run (/srv/data/bundles/ab/component.cjs:12:7)\n    at /srv/dist/sandbox/runner-bundle/runner.cjs:1:1\n    at node:internal/process/task_queues:95:5";
    expect(mapStackText(stack, { file: "/elsewhere/component.cjs", sourceMaps: singleBundleMaps(null) })).toBe("Error: x\n    at run (component.cjs:12:7)\n    at node:internal/process/task_queues:95:5");
    const error = mapSandboxError({ code: "InvalidComponent", name: "Error", message: "Cannot find module './x'\nRequire stack:\n- /srv/runners/r-1/ab/component.cjs" }, { file: "/b/component.cjs" });
    expect(error.message).toBe("Cannot find module './x'\nRequire stack:\n- component.cjs");
  });

  it("maps where an eval'd function was made, and names no other folder in such a frame", async () => {
    const bundle = await bundleComponent({ kind: "code", code: `export default {\n  run() {\n    return new Function("throw new Error('evil')")();\n  },\n};\n`, filename: "ev.ts" });
    const file = join(folder, "ev", "component.cjs");
    mkdirSync(join(folder, "ev"));
    writeFileSync(file, bundle.code);
    const stack = mapStackText(stackOf(() => (load(file).default as { run(): void }).run()), { file, sourceMaps: singleBundleMaps(bundle.map) });
    expect(stack).toMatch(/at eval \(eval at run \(ev\.ts:3:\d+\), <anonymous>:\d+:\d+\)/);
    expect(stack).not.toContain(folder);
    expect(mapStackText("E\n    at eval (eval at f (/srv/dist/x.js:1:2), <anonymous>:1:1)", { file: "/b/component.cjs" })).toBe("E\n    at eval (eval at f (x.js:1:2), <anonymous>:1:1)");
  });

  it("keeps a package's frame outside the bundle as a relative node_modules path", () => {
    const stack = "Error: x\n    at f (/srv/data/cache/abc/node_modules/left/index.js:1:2)";
    expect(mapStackText(stack, { file: "/b/component.cjs" })).toBe("Error: x\n    at f (node_modules/left/index.js:1:2)");
  });
});

describe("stack mapping of hostile text", () => {
  it("takes linear time over a long line of slashes that ends in the bundle's name", () => {
    const line = `${"/".repeat(2_000_000)}component.cjs ${"    at (".repeat(100_000)}:1:1)`;
    const started = performance.now();
    const mapped = mapStackText(`Error: x\n${line}\n    at ${"a (".repeat(200_000)}/x/component.cjs:1:1)`, { file: "/b/component.cjs" });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(mapped.startsWith("Error: x\ncomponent.cjs ")).toBe(true);
  });

  it("takes file:// paths out as well", () => {
    expect(mapStackText("see file:///srv/r/component.cjs and /srv/component.cjs.map", { file: "/b/component.cjs" })).toBe("see component.cjs and /srv/component.cjs.map");
  });
});
