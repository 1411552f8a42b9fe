/** A signal for commands that run until the user stops them. */
export interface Interrupt {
  /** Aborts on the first Ctrl-C (SIGINT) or SIGTERM. */
  signal: AbortSignal;
  /** Resolves when the signal aborts. */
  stopped: Promise<void>;
  /** Stops listening for the signals; call it when the command ends. */
  dispose(): void;
}

/**
 * Ctrl-C ends a following command cleanly (exit 0, connections closed); a
 * second Ctrl-C, for when the clean ending hangs, exits at once with 130.
 */
export function listenForInterrupt(): Interrupt {
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const stopped = new Promise<void>((resolve) => controller.signal.addEventListener("abort", () => resolve(), { once: true }));
  return {
    signal: controller.signal,
    stopped,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
