/**
 * Runs `task` for each call, one at a time; calls while it runs fold into
 * one more run after it (a burst of file saves makes one more update, not
 * one per save).
 */
export function serialize(task: () => Promise<void>): () => void {
  let running = false;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void (async () => {
      do {
        again = false;
        await task();
      } while (again);
      running = false;
    })();
  };
}
