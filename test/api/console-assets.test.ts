import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleAssets } from "../../src/api/console-assets.js";
import { deploySource } from "../helpers/sources.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";

const CSP = "default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; connect-src 'self'; img-src 'self' data:; style-src 'self'";
const HTML = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };

const ECHO_PATH = `module.exports = {
  name: "Path echo", version: "0.1.0",
  props: { http: { type: "$.interface.http", customResponse: true } },
  async run(event) { this.http.respond({ status: 200, headers: { "content-type": "text/plain" }, body: "source saw " + event.path }); },
};`;

describe("the web console served at / (built dist/ui)", () => {
  let server: TestServer;

  beforeAll(async () => {
    // The console must be built (skipped when up to date, as `npm run build` is).
    const build = spawnSync(process.execPath, ["scripts/build.mjs"], { encoding: "utf8" });
    if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
    server = await startTestServer();
  }, 240_000);
  afterAll(async () => {
    await server.close();
  });

  it("answers / with index.html, never cached, under a strict CSP with a fresh style nonce", async () => {
    const first = await fetch(`${server.url}/`, { headers: HTML });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("text/html");
    expect(first.headers.get("cache-control")).toBe("no-cache");
    expect(first.headers.get("x-content-type-options")).toBe("nosniff");
    expect(first.headers.get("referrer-policy")).toBe("no-referrer");
    const csp = first.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toBe(`${CSP} 'nonce-${nonce}'`);
    expect(csp).not.toContain("unsafe-inline");
    const html = await first.text();
    expect(html).toContain(`<meta name="csp-nonce" content="${nonce}"`);
    expect(html).not.toContain("__CSP_NONCE__");
    // No inline script: only external module scripts from /assets.
    for (const script of html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)) {
      expect(script[0]).toMatch(/src="\/assets\/[^"]+\.js"/);
      expect(script[1]?.trim()).toBe("");
    }

    const second = await fetch(`${server.url}/`, { headers: HTML });
    expect(second.headers.get("content-security-policy")).not.toContain(`'nonce-${nonce}'`);
  });

  it("serves hashed assets for a year, immutable, and a clear 404 for an unknown or crafted one", async () => {
    const html = await (await fetch(`${server.url}/`)).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toMatch(/^\/assets\/index-[A-Za-z0-9_-]{8}\.js$/);
    const asset = await fetch(`${server.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toContain("text/javascript");
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-security-policy")).toBe(CSP);
    expect(asset.headers.get("x-content-type-options")).toBe("nosniff");
    // React's production build, even when the build ran under the tests (NODE_ENV=test).
    expect(await asset.text()).not.toContain("Download the React DevTools");

    const missing = await fetch(`${server.url}/assets/index-00000000.js`, { headers: HTML });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain("Reload the page");
    // An escaped slash stays in the name: refused.
    const escaped = await fetch(`${server.url}/assets/..%2f..%2fpackage.json`, { headers: HTML });
    expect(escaped.status).toBe(404);
    // Dot segments are resolved by the client before sending (/package.json): at most the console's page, never the file.
    for (const crafted of ["/assets/../../package.json", "/assets/%2e%2e/%2e%2e/package.json"]) {
      const response = await fetch(`${server.url}${crafted}`, { headers: HTML });
      const text = await response.text();
      expect(text).not.toContain('"name": "runnel"');
      if (response.status === 200) expect(text).toContain('<div id="root">');
    }
  });

  it("answers a browser's GET of a client route with index.html, and leaves the API's 404s alone", async () => {
    for (const path of ["/sign-in", "/sources/dc_123", "/workflows/p_1/runs?x=1"]) {
      const page = await fetch(`${server.url}${path}`, { headers: HTML });
      expect(page.status, path).toBe(200);
      expect(await page.text()).toContain('<div id="root">');
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    }
    // Not a browser asking for a page: the API's JSON 404.
    const json = await call(server.url, "GET", "/sources/dc_123");
    expect(json.status).toBe(404);
    expect(json.body.error.code).toBe("NotFound");
    // Under /v1 and /sse, never the console, even for a browser.
    for (const path of ["/v1/nope", "/v1", "/sse/nope/emits/x", "/healthz/x"]) {
      const response = await fetch(`${server.url}${path}`, { headers: HTML });
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type"), path).toContain("application/json");
    }
    // Not a GET: the API's 404.
    expect((await call(server.url, "POST", "/sign-in", { json: {} })).status).toBe(404);
  });

  it("never shadows a source's HTTP endpoint, whatever its path and Accept", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: ECHO_PATH, name: "path-echo" });
    expect(source.endpoint_url).toMatch(/\/e\//);
    for (const path of ["", "/", "/sign-in", "/assets/index.js", "/sources"]) {
      const response = await fetch(`${source.endpoint_url}${path}`, { headers: HTML });
      expect(response.status, path).toBe(200);
      expect(await response.text(), path).toBe(`source saw ${path || "/"}`);
    }
    // An unknown endpoint token is the endpoints' own 404, not the console.
    const unknown = await fetch(`${server.url}/e/unknown-token/sign-in`, { headers: HTML });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).not.toContain('<div id="root">');
  });
});

describe("the web console when dist/ui was not built", () => {
  let uiDir: string;
  beforeAll(async () => {
    uiDir = await mkdtemp(join(tmpdir(), "runnel-no-ui-"));
  });
  afterAll(async () => {
    await rm(uiDir, { recursive: true, force: true });
  });

  it("says to run npm run build, at / and at client routes", async () => {
    const app = Fastify();
    const assets = createConsoleAssets({ uiDir });
    await app.register(assets.routes);
    app.setNotFoundHandler(async (request, reply) => ((await assets.fallback(request, reply)) ? reply : reply.code(404).send({ error: "no route" })));
    for (const url of ["/", "/sources"]) {
      const response = await app.inject({ method: "GET", url, headers: HTML });
      expect(response.statusCode, url).toBe(503);
      expect(response.body).toContain("Run `npm run build`");
      expect(response.headers["content-security-policy"]).toBe(CSP);
    }
    await app.close();
  });
});
