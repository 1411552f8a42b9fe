/**
 * Arguments the host gives a runner after its entry file. Shared by both
 * sides; the runner may import values only from its own folder.
 */

/** `--runnel-egress=<socket path>`: route user code's connections through the egress proxy listening there. */
export const EGRESS_ARG = "--runnel-egress=";

/** The egress proxy's socket path given on the runner's command line, if any. */
export function egressSocketFromArgs(argv: readonly string[]): string | null {
  const given = argv.find((arg) => arg.startsWith(EGRESS_ARG));
  return given ? given.slice(EGRESS_ARG.length) : null;
}

/** `--runnel-max-bundles=<n>`: bundles a runner keeps loaded at most (runner/bundles.ts). */
export const MAX_BUNDLES_ARG = "--runnel-max-bundles=";
export const DEFAULT_MAX_BUNDLES = 1000;

export function maxBundlesFromArgs(argv: readonly string[]): number {
  const given = argv.find((arg) => arg.startsWith(MAX_BUNDLES_ARG));
  const value = given ? Number(given.slice(MAX_BUNDLES_ARG.length)) : NaN;
  return Number.isSafeInteger(value) && value > 0 ? value : DEFAULT_MAX_BUNDLES;
}
