import { useCallback, useEffect, useRef } from "react";

/**
 * Collects items arriving fast (a live stream at 100 events a second) and
 * hands them over at most once per animation frame, newest last: one render
 * per frame instead of one per message.
 */
export function useFrameBatch<T>(flush: (items: T[]) => void): (item: T) => void {
  const pending = useRef<T[]>([]);
  const frame = useRef<number | null>(null);
  const flushRef = useRef(flush);
  flushRef.current = flush;

  useEffect(
    () => () => {
      if (frame.current !== null) cancelAnimationFrame(frame.current);
    },
    [],
  );

  return useCallback((item: T) => {
    pending.current.push(item);
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      const items = pending.current;
      pending.current = [];
      flushRef.current(items);
    });
  }, []);
}
