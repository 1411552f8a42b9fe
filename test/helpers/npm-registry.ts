import { createServer } from "node:net";
import { startFixtureRegistry, type FixturePackage, type FixtureRegistry } from "../../src/bench/fixture-registry.js";
import { call, type TestServer } from "./server.js";

const leftpad = (version: string): FixturePackage => ({
  name: "leftpad",
  version,
  files: {
    "index.js": `module.exports = function leftpad(text, length, fill = " ") { return String(text).padStart(length, fill); };\nmodule.exports.version = ${JSON.stringify(version)};\n`,
  },
});

const scoped = (version: string): FixturePackage => ({
  name: "@fixture/scoped",
  version,
  files: {
    "index.js": `exports.version = ${JSON.stringify(version)};\n`,
    "sub.js": `module.exports = "sub of ${version}";\n`,
  },
});

/**
 * The packages every package test deploys against: several versions of one
 * package, a scoped one with a subpath, one with a dependency, an ES module
 * package, one whose install script would leave a marker, and stand-ins of
 * @pipedream/platform and @pipedream/types (own code, the same shape).
 */
export function fixturePackages(markerFile: string): FixturePackage[] {
  return [
    ...["1.0.0", "1.1.0", "1.1.4", "1.2.3", "2.0.0"].map(leftpad),
    ...["1.0.0", "1.5.0", "2.0.0"].map(scoped),
    {
      name: "with-dep",
      version: "1.0.0",
      manifest: { dependencies: { leftpad: "^1.0.0" } },
      files: { "index.js": `const leftpad = require("leftpad");\nexports.leftpadVersion = leftpad.version;\nexports.stars = (text) => leftpad(text, 5, "*");\n` },
    },
    {
      name: "esm-only",
      version: "1.0.0",
      manifest: { type: "module", exports: { ".": "./index.js", "./extra": "./lib/extra.js" } },
      files: {
        "index.js": `import { shout } from "./lib/shout.js";\nexport const kind = "esm";\nexport default function greet(name) { return shout("hello " + name); }\n`,
        "lib/shout.js": `export const shout = (text) => text.toUpperCase();\n`,
        "lib/extra.js": `export const extra = "extra from esm-only";\n`,
      },
    },
    {
      name: "has-install-script",
      version: "1.0.0",
      manifest: {
        scripts: {
          preinstall: `node -e "require('fs').writeFileSync('${markerFile}', 'preinstall ran')"`,
          install: `node -e "require('fs').writeFileSync('${markerFile}', 'install ran')"`,
          postinstall: `node -e "require('fs').writeFileSync('${markerFile}', 'postinstall ran')"`,
        },
      },
      files: { "index.js": `module.exports = "installed without running scripts";\n` },
    },
    {
      name: "reaches-out",
      version: "1.0.0",
      files: { "index.js": `module.exports = require("../../../../outside.json");\n` },
    },
    {
      name: "@pipedream/platform",
      version: "3.0.0",
      files: { "index.js": PLATFORM },
    },
    {
      name: "@pipedream/types",
      version: "0.3.0",
      files: { "index.js": `const identity = (definition) => definition;\nmodule.exports = { defineSource: identity, defineAction: identity, defineApp: identity, defineComponent: identity };\n` },
    },
  ];
}

/** The platform package's surface that components use: axios($, config), ConfigurationError, the polling interval. */
const PLATFORM = `class ConfigurationError extends Error {
  constructor(message) { super(message); this.name = "ConfigurationError"; }
}
async function axios($, config) {
  const url = new URL(config.url, config.baseURL);
  for (const [key, value] of Object.entries(config.params ?? {})) url.searchParams.set(key, String(value));
  const json = config.data !== undefined && typeof config.data !== "string";
  const response = await fetch(url, {
    method: (config.method ?? "GET").toUpperCase(),
    headers: { ...(json ? { "content-type": "application/json" } : {}), ...config.headers },
    body: config.data === undefined ? undefined : json ? JSON.stringify(config.data) : config.data,
  });
  const text = await response.text();
  let data = text;
  try { data = JSON.parse(text); } catch {}
  if (!response.ok) throw Object.assign(new Error("Request failed with status code " + response.status), { response: { status: response.status, data } });
  return config.returnFullResponse ? { status: response.status, headers: Object.fromEntries(response.headers), data } : data;
}
module.exports = { axios, ConfigurationError, DEFAULT_POLLING_SOURCE_TIMER_INTERVAL: 900 };
`;

export function startNpmFixture(markerFile: string): Promise<FixtureRegistry> {
  return startFixtureRegistry(fixturePackages(markerFile));
}

/** Deploys a source and runs it once; the first event's body, or the run's error. */
export async function deployAndRun(server: TestServer, code: string, extra: Record<string, unknown> = {}): Promise<{ source: any; event: any; run: any }> {
  const deployed = await call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: code, ...extra } });
  if (deployed.status !== 200) throw new Error(`deploy failed: ${deployed.status} ${JSON.stringify(deployed.body)}`);
  const run = await runSource(server, deployed.body.data.id);
  return { source: deployed.body.data, event: run.events[0]?.event, run };
}

export async function runSource(server: TestServer, id: string, event?: unknown): Promise<any> {
  const run = await call(server.url, "POST", `/v1/sources/${id}/run`, { key: server.adminKey, json: event === undefined ? {} : { event } });
  if (run.status !== 200) throw new Error(`run failed: ${run.status} ${JSON.stringify(run.body)}`);
  return run.body.data;
}

/** An ES module component whose run emits what `expression` evaluates to, after `head` (its imports). */
export function emitting(head: string, expression: string, name = "Package probe"): string {
  return `${head}\nexport default { name: ${JSON.stringify(name)}, version: "1", async run() { this.$emit(${expression}); } };\n`;
}

/** A loopback port nothing listens on: a registry that is down. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
