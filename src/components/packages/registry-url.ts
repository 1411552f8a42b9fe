import { execFile } from "node:child_process";

export const PUBLIC_REGISTRY = "https://registry.npmjs.org/";

export interface RegistryLocatorOptions {
  /** RUNNEL_NPM_REGISTRY, when set: used as it is. */
  configured: string | null;
  /** Asks npm for its registry; replaced in tests. */
  askNpm?: () => Promise<string>;
}

/**
 * The registry to resolve packages from: the configured one, else the one npm
 * is configured with (`npm config get registry`, asked once and only when a
 * component first imports a package, since starting npm takes a few hundred
 * milliseconds), else the public registry when there is no npm to ask.
 */
export function registryLocator(options: RegistryLocatorOptions): () => Promise<string> {
  let location: Promise<string> | null = options.configured ? Promise.resolve(options.configured) : null;
  const askNpm = options.askNpm ?? npmConfigRegistry;
  return () => {
    location ??= askNpm().then(
      (answer) => withSlash(answer) ?? PUBLIC_REGISTRY,
      () => PUBLIC_REGISTRY,
    );
    return location;
  };
}

function npmConfigRegistry(): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile("npm", ["config", "get", "registry"], { timeout: 10_000, windowsHide: true }, (error, stdout) => (error ? reject(error) : resolve(stdout)));
  });
}

function withSlash(answer: string): string | null {
  const text = answer.trim();
  try {
    const url = new URL(text);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  } catch {
    return null;
  }
  return `${text.replace(/\/+$/, "")}/`;
}
