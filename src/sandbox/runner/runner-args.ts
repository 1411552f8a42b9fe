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
