import { mkdtemp, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../domain/errors.js";
import { bundleComponent } from "./bundle.js";

/** Loads bundled CommonJS the way a runner does, here only to check the shape (test code, not user code). */
function load(code: string): any {
  const module = { exports: {} as any };
  new Function("module", "exports", "require", code)(module, module.exports, createRequire(import.meta.url));
  return module.exports.default ?? module.exports;
}

describe("bundleComponent", () => {
  it.each([
    ["CommonJS", "module.exports = { name: 'cjs', version: '0.1.0', async run() { return 1 } }", undefined],
    ["an ES module", "export default { name: 'esm', version: '0.1.0', async run() { return 1 } }", "c.mjs"],
    ["TypeScript", "const v: string = '0.1.0'; export default { name: 'ts', version: v, async run(): Promise<number> { return 1 } }", undefined],
  ])("compiles %s to CommonJS", async (_kind, code, filename) => {
    const bundle = await bundleComponent({ kind: "code", code, filename });
    expect(bundle.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(load(bundle.code)).toMatchObject({ version: "0.1.0" });
  });

  it("gives the same hash for the same code", async () => {
    const code = "export default { name: 'x', version: '1', run() {} }";
    expect((await bundleComponent({ kind: "code", code })).hash).toBe((await bundleComponent({ kind: "code", code })).hash);
  });

  it("bundles relative imports of a file, such as its app file and shared helpers", async () => {
    const dir = await mkdtemp(join(tmpdir(), "runnel-bundle-"));
    await mkdir(join(dir, "sources", "new-item"), { recursive: true });
    await mkdir(join(dir, "sources", "common"), { recursive: true });
    await writeFile(join(dir, "http.app.mjs"), "export default { type: 'app', app: 'http', methods: { hi() { return 'hi' } } }");
    await writeFile(join(dir, "sources", "common", "base.mjs"), "export default { props: { db: '$.service.db' } }");
    await writeFile(
      join(dir, "sources", "new-item", "new-item.mjs"),
      "import http from '../../http.app.mjs';\nimport common from '../common/base.mjs';\nexport default { ...common, name: 'n', version: '1', props: { ...common.props, http }, run() {} }",
    );
    const bundle = await bundleComponent({ kind: "file", path: join(dir, "sources", "new-item", "new-item.mjs") });
    const component = load(bundle.code);
    expect(component.props.http.app).toBe("http");
    expect(component.props.db).toBe("$.service.db");
  });

  it("keeps packages external and lists them, without Node's own modules", async () => {
    const code =
      "import axios from 'axios@^1'; import get from 'lodash/get'; import { x } from '@pipedream/platform'; import fs from 'node:fs'; import path from 'path';\n" +
      "export default { name: 'p', version: '1', run() { return [axios, get, x, fs, path, import('@scope/pkg@~2/sub')] } }";
    const bundle = await bundleComponent({ kind: "code", code });
    expect(bundle.packages).toEqual(["@pipedream/platform", "@scope/pkg", "axios", "lodash"]);
    expect(bundle.imports).toEqual(["@pipedream/platform", "@scope/pkg@~2/sub", "axios@^1", "lodash/get"]);
    expect(bundle.code).toContain('require("axios@^1")');
    expect(bundle.code).toContain('require("@scope/pkg@~2/sub")');
  });

  it("guards require(name) with a message saying why packages must be imported by a static string", async () => {
    const code = "'use strict';\nmodule.exports = { name: 'd', version: '1', run() { const name = 'left' + 'pad'; return require(name); }, strict() { return this === undefined } };";
    const bundle = await bundleComponent({ kind: "code", code, filename: "d.cjs" }, { guardDynamicRequire: true });
    expect(bundle.code.startsWith('"use strict";')).toBe(true);
    const component = load(bundle.code);
    expect(component.strict.call(undefined)).toBe(true);
    expect(() => component.run()).toThrow(/Cannot find package "leftpad": .*dynamic requires of packages are not supported.*static string/);
    const builtin = await bundleComponent({ kind: "code", code: code.replace("'left' + 'pad'", "['no', 'de:path'].join('')") }, { guardDynamicRequire: true });
    expect(load(builtin.code).run().sep).toBe("/");
  });

  it("names the line and column of a syntax error", async () => {
    const code = "export default {\n  name: 'broken',\n  version: '1',,\n}";
    const error = await bundleComponent({ kind: "code", code }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).field).toBe("component_code");
    expect((error as ValidationError).message).toMatch(/^Syntax error at line 3, column \d+/);
    expect((error as ValidationError).details).toMatchObject({ line: 3 });
  });
});

describe("inline code", () => {
  it.each(["./secrets.json", "../../.runnel/config.js", "/etc/passwd"])("cannot import the server's files (%s)", async (path) => {
    const code = `import x from ${JSON.stringify(path)};\nexport default { name: "n", version: "1", run() { return x } }`;
    const error = await bundleComponent({ kind: "code", code }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).message).toMatch(/cannot import .*inline/);
  });
});
