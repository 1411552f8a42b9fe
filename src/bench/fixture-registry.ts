import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import semver from "semver";
import { c as createTar } from "tar";

/** A package the fixture registry serves: its files, and the package.json fields beyond name and version. */
export interface FixturePackage {
  name: string;
  version: string;
  files: Record<string, string>;
  manifest?: Record<string, unknown>;
}

export interface FixtureRegistry {
  /** Ends with a slash, as RUNNEL_NPM_REGISTRY is read. */
  url: string;
  /** Requests per path (decoded), to prove what a deploy asked for. */
  requests: Map<string, number>;
  tarballRequests(): number;
  packumentRequests(name: string): number;
  close(): Promise<void>;
}

/**
 * An npm registry on 127.0.0.1 for tests and the benchmark: package documents
 * at `/<name>` (scoped as `/@scope%2fname` or `/@scope/name`) and tarballs it
 * packed itself, with the integrity npm would give them. No test depends on
 * the public registry.
 */
export async function startFixtureRegistry(packages: readonly FixturePackage[]): Promise<FixtureRegistry> {
  const workDir = await mkdtemp(join(tmpdir(), "runnel-registry-"));
  const tarballs = new Map<string, Buffer>();
  const requests = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = decodeURIComponent((request.url ?? "/").split("?")[0]!);
    requests.set(path, (requests.get(path) ?? 0) + 1);
    const tarball = tarballs.get(path);
    if (tarball) {
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": tarball.length });
      response.end(tarball);
      return;
    }
    const document = documents.get(path.slice(1));
    if (document) {
      response.writeHead(200, { "content-type": "application/vnd.npm.install-v1+json" });
      response.end(JSON.stringify(document));
      return;
    }
    response.writeHead(404, { "content-type": "application/json" });
    response.end(JSON.stringify({ error: "Not found" }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;

  const documents = new Map<string, { name: string; "dist-tags": Record<string, string>; versions: Record<string, unknown> }>();
  for (const pkg of packages) {
    const bytes = await pack(workDir, pkg);
    const file = `/${pkg.name}/-/${pkg.name.split("/").pop()}-${pkg.version}.tgz`;
    tarballs.set(file, bytes);
    const document = documents.get(pkg.name) ?? { name: pkg.name, "dist-tags": {}, versions: {} };
    const scripts = (pkg.manifest?.scripts ?? {}) as Record<string, string>;
    document.versions[pkg.version] = {
      name: pkg.name,
      version: pkg.version,
      ...pick(pkg.manifest ?? {}, ["dependencies", "peerDependencies", "optionalDependencies", "bundleDependencies"]),
      ...(scripts.install || scripts.preinstall || scripts.postinstall ? { hasInstallScript: true } : {}),
      dist: {
        tarball: `${url.slice(0, -1)}${file}`,
        integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
        shasum: createHash("sha1").update(bytes).digest("hex"),
      },
    };
    const latest = document["dist-tags"].latest;
    if (!latest || semver.gt(pkg.version, latest)) document["dist-tags"].latest = pkg.version;
    documents.set(pkg.name, document);
  }

  return {
    url,
    requests,
    tarballRequests: () => [...requests].filter(([path]) => path.endsWith(".tgz")).reduce((sum, [, count]) => sum + count, 0),
    packumentRequests: (name) => requests.get(`/${name}`) ?? 0,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/** A gzipped tarball with everything under `package/`, as `npm pack` makes it. */
async function pack(workDir: string, pkg: FixturePackage): Promise<Buffer> {
  const folder = join(workDir, `${pkg.name.replace("/", "+")}@${pkg.version}`);
  const files: Record<string, string> = { "package.json": JSON.stringify({ name: pkg.name, version: pkg.version, ...pkg.manifest }, null, 2), ...pkg.files };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(folder, "package", path)), { recursive: true });
    await writeFile(join(folder, "package", path), content);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of createTar({ gzip: true, cwd: folder, portable: true, mtime: new Date(0) }, ["package"])) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

function pick(record: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => record[key] !== undefined).map((key) => [key, record[key]]));
}
