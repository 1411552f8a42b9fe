import { join } from "node:path";
import type { Logger } from "pino";
import { ComponentBundler } from "../components/component-bundler.js";
import { PackageCache } from "../components/packages/package-cache.js";
import { RegistryClient } from "../components/packages/registry-client.js";
import { registryLocator } from "../components/packages/registry-url.js";
import type { DeployedSource } from "../domain/sources.js";
import type { Sandbox } from "../sandbox/sandbox.js";
import type { Store } from "../store/store.js";
import { Accounts } from "./accounts.js";
import { BundleFiles } from "./bundle-files.js";
import { ComponentLoader } from "./component-loader.js";
import { EventHub } from "./event-hub.js";
import { SecretBox } from "./secrets.js";
import { SourceInvoker, type RunLimits } from "./source-invoker.js";
import { SourceLifecycle } from "./source-lifecycle.js";
import { SourcesService } from "./sources-service.js";
import { TimerScheduler } from "./timer-scheduler.js";

export interface EngineOptions {
  store: Store;
  sandbox: Sandbox;
  logger: Logger;
  dataDir: string;
  masterKey: Buffer;
  limits?: RunLimits;
  /** The npm registry for component imports; null or absent: the one npm is configured with. */
  npmRegistry?: string | null;
}

export interface Engine {
  accounts: Accounts;
  sources: SourcesService;
  scheduler: TimerScheduler;
  /** The address endpoints are shown and reached at; known once the server listens. */
  setBaseUrl(url: string): void;
  endpointUrl(source: DeployedSource): string | null;
  /** Stops timers and waits for runs in flight. */
  stop(): Promise<void>;
}

/** Wires the engine's parts; the store and sandbox are handed in, never chosen here. */
export function createEngine(options: EngineOptions): Engine {
  const { store, sandbox, logger } = options;
  let baseUrl = "";
  const endpointUrl = (source: DeployedSource) => (source.endpointToken ? `${baseUrl}/e/${source.endpointToken}` : null);

  const hub = new EventHub();
  const secrets = new SecretBox(options.masterKey);
  const registry = new RegistryClient({ registryUrl: registryLocator({ configured: options.npmRegistry ?? null }) });
  const cache = new PackageCache({ root: join(options.dataDir, "packages"), download: (key, tarball, integrity) => registry.tarball(key, tarball, integrity) });
  const bundler = new ComponentBundler({ cache, registry });
  const loader = new ComponentLoader({ store, sandbox, bundler, bundleFiles: new BundleFiles(join(options.dataDir, "bundles")) });
  const invoker = new SourceInvoker({ store, sandbox, loader, hub, secrets, logger, endpointUrl, ...(options.limits ? { limits: options.limits } : {}) });
  const scheduler = new TimerScheduler({ store, invoker, logger });
  const lifecycle = new SourceLifecycle({ store, loader, invoker, hub, secrets, onTimersChanged: () => scheduler.wake() });
  const sources = new SourcesService({ store, loader, invoker, lifecycle, hub, secrets });

  return {
    accounts: new Accounts({ store }),
    sources,
    scheduler,
    setBaseUrl(url) {
      baseUrl = url.replace(/\/+$/, "");
    },
    endpointUrl,
    async stop() {
      await scheduler.stop();
      await invoker.drain();
    },
  };
}
