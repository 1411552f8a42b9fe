import type { ComponentManifest } from "./component-manifest.js";

/**
 * One version of an app file published to the owner's registry (issue 17):
 * keyed by its slug, versioned like components, never changed once
 * published. Components use it through an app prop; it is never deployed.
 */
export interface PublishedAppEntry {
  ownerId: string;
  slug: string;
  version: string;
  name: string;
  description: string | null;
  codeHash: string;
  manifest: ComponentManifest;
  publishedAt: number;
}

/** A published app version with its code and the bundle a runner loads. */
export interface PublishedApp extends PublishedAppEntry {
  code: string;
  bundle: string;
  bundleHash: string;
  bundleMap: string | null;
}
