import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { ENDPOINT_PREFIX } from "./http-endpoint/endpoint-url.js";

/** dist/ui at the project's root, from src/api (tests) as from dist/api (the built server). */
export const DEFAULT_UI_DIR = fileURLToPath(new URL("../../dist/ui", import.meta.url));

/** In index.html, where each response's CSP nonce goes (ui/index.html's <meta name="csp-nonce">). */
const NONCE_PLACEHOLDER = "__CSP_NONCE__";

/** Vite names assets by their content's hash: a name never changes meaning, so browsers may keep it for good. */
const IMMUTABLE = "public, max-age=31536000, immutable";

const CONTENT_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

/** Paths that belong to the API, its streams and sources' endpoints: never answered with the console. */
const NOT_CONSOLE = ["/v1/", "/sse/", "/healthz/", ENDPOINT_PREFIX];
const NOT_CONSOLE_EXACT = new Set(["/v1", "/sse", "/e", "/healthz"]);

/**
 * The Content-Security-Policy of every console response. No inline script,
 * ever. Styles: CodeMirror injects <style> elements at run time; it sets the
 * nonce given through EditorView.cspNonce on them, which the console reads
 * from <meta name="csp-nonce"> (a fresh nonce per index.html response).
 */
export function consoleCsp(nonce: string | null): string {
  const style = nonce ? `style-src 'self' 'nonce-${nonce}'` : "style-src 'self'";
  return `default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; connect-src 'self'; img-src 'self' data:; ${style}`;
}

function secureHeaders(reply: FastifyReply, nonce: string | null): FastifyReply {
  return reply.header("content-security-policy", consoleCsp(nonce)).header("x-content-type-options", "nosniff").header("referrer-policy", "no-referrer");
}

export interface ConsoleAssetsOptions {
  uiDir?: string | undefined;
}

/**
 * Serves the built console: `/` and client routes answer index.html (never
 * cached, so a new build is picked up), `/assets/*` the hashed files (cached
 * for good). Sources' endpoints (`/e/…`) are served before Fastify sees a
 * request (app.ts, serverFactory), so no console route can shadow them.
 */
export function createConsoleAssets(options: ConsoleAssetsOptions = {}) {
  const uiDir = options.uiDir ?? DEFAULT_UI_DIR;

  async function sendIndex(reply: FastifyReply): Promise<FastifyReply> {
    let html: string;
    try {
      html = await readFile(join(uiDir, "index.html"), "utf8");
    } catch {
      secureHeaders(reply, null).header("cache-control", "no-cache");
      return reply
        .code(503)
        .type("text/plain; charset=utf-8")
        .send(`The web console is not built: ${uiDir} has no index.html.\nRun \`npm run build\` (or \`npm start\`, which builds first), then reload this page.\nThe API is served at /v1 (described at /v1/openapi.json).\n`);
    }
    const nonce = randomBytes(16).toString("base64");
    secureHeaders(reply, nonce).header("cache-control", "no-cache");
    return reply.code(200).type("text/html; charset=utf-8").send(html.replaceAll(NONCE_PLACEHOLDER, nonce));
  }

  async function sendAsset(name: string, reply: FastifyReply): Promise<FastifyReply> {
    // Vite's asset names: hash and name characters only; anything else (../, %2e) is not one of ours.
    const type = CONTENT_TYPES[extname(name)];
    const file = join(uiDir, "assets", name);
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || name.startsWith(".") || !type || !(await isFile(file))) {
      secureHeaders(reply, null).header("cache-control", "no-cache");
      return reply.code(404).type("text/plain; charset=utf-8").send(`There is no console asset ${name}. Reload the page: the console may have been rebuilt.\n`);
    }
    secureHeaders(reply, null).header("cache-control", IMMUTABLE);
    return reply.code(200).type(type).send(createReadStream(file));
  }

  /** Whether a request that no route answered is a browser asking for a page of the console. */
  function wantsConsolePage(request: FastifyRequest): boolean {
    if (request.method !== "GET" && request.method !== "HEAD") return false;
    const path = request.url.split("?")[0] ?? "";
    if (NOT_CONSOLE_EXACT.has(path) || NOT_CONSOLE.some((prefix) => path.startsWith(prefix)) || path.startsWith("/assets/")) return false;
    return (request.headers.accept ?? "").includes("text/html");
  }

  const routes: FastifyPluginAsync = async (app) => {
    app.get("/", { schema: { hide: true } }, (_request, reply) => sendIndex(reply));
    app.get<{ Params: { "*": string } }>("/assets/*", { schema: { hide: true } }, (request, reply) => sendAsset(request.params["*"], reply));
  };

  return {
    routes,
    /** For the not-found handler: answers a client route with index.html; false when the request is not one. */
    async fallback(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
      if (!wantsConsolePage(request)) return false;
      await sendIndex(reply);
      return true;
    },
  };
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
