import type { ComponentManifest } from "./component-manifest.js";
import type { PackageLock } from "./package-lock.js";

/** Saved component: code that was validated and bundled, not yet an instance. */
export interface SavedComponent {
  id: string; // sc_…
  ownerId: string;
  name: string;
  version: string;
  key: string | null;
  kind: "source" | "action";
  /** The code as the user wrote it (inline code, or the entry file of a bundle). */
  code: string;
  codeHash: string;
  /** The CommonJS bundle a runner loads. */
  bundle: string;
  bundleHash: string;
  /** The bundle's source map (v3 JSON, relative sources), for stack traces that name the component's own lines; null for components saved before maps were kept. */
  bundleMap: string | null;
  /** The package versions bundled in, so that the same code deploys the same packages; null when it imports none. */
  lock: PackageLock | null;
  manifest: ComponentManifest;
  createdAt: number;
  updatedAt: number;
}

/** The interface a source listens on, derived from its props. */
export interface TimerSchedule {
  intervalSeconds: number | null;
  cron: string | null;
  /** The IANA zone a cron schedule runs in; absent (older rows too) means UTC. Never set with an interval. */
  timezone?: string;
}

/** Deployed source: an instance of a saved component with configured props. */
export interface DeployedSource {
  id: string; // dc_…
  ownerId: string;
  componentId: string;
  name: string;
  nameSlug: string;
  /** Configured values; secret values are encrypted (see engine/secrets). */
  configuredProps: Record<string, unknown>;
  active: boolean;
  /** Unguessable path token of the HTTP endpoint, when the component has an HTTP interface. */
  endpointToken: string | null;
  timer: TimerSchedule | null;
  /** Epoch ms of the next timer tick; the scheduler claims it atomically. */
  nextTickAt: number | null;
  /** Events kept per channel. */
  retention: number;
  /** The source's own limits; null fields take the server's defaults. */
  limits: SourceLimits | null;
  createdAt: number;
  updatedAt: number;
}

export interface SourceLimits {
  timeoutSeconds: number | null;
  memoryMb: number | null;
}

/** An emitted event as stored: `id` is `<epoch ms>-<seq>`. */
export interface StoredEvent {
  id: string;
  emitterId: string;
  /** Channel; "" is the default channel. */
  channel: string;
  summary: string | null;
  /** The id the component passed to $emit (dedupe key), as text. */
  emitId: string | null;
  event: unknown;
  indexedAtMs: number;
}

export interface LogEntry {
  id: string;
  emitterId: string;
  stream: "stdout" | "stderr" | "system";
  text: string;
  ts: number;
}

export const DEFAULT_EVENT_RETENTION = 100;
export const LOG_RETENTION = 1_000;
