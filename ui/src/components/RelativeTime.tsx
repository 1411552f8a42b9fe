import { useEffect, useState } from "react";

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

const format = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

/** "3 minutes ago" for a time; epoch seconds (as the API gives them), milliseconds or ISO text. */
export function toDate(value: number | string): Date {
  if (typeof value === "string") return new Date(value);
  // The API's times are epoch seconds; anything this large is milliseconds.
  return new Date(value < 1e11 ? value * 1000 : value);
}

export function relativeText(date: Date, now: number): string {
  const seconds = Math.round((date.getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === "second") return format.format(Math.round(seconds / size), unit);
  }
  return date.toLocaleString();
}

/**
 * A time shown relative to now (kept current), with the exact time on hover
 * and for machines. A time past is never shown in the future (a clock a
 * little ahead of the browser's); `due` is a time to come ("in 1 hour").
 */
export function RelativeTime({ value, due = false }: { value: number | string | null | undefined; due?: boolean }) {
  // Re-rendered every 30 s to stay current; "now" is read at each render, so a time just set never shows in the future.
  const [, setTick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => setTick((tick) => tick + 1), 30_000);
    return () => clearInterval(timer);
  }, []);
  const now = Date.now();
  if (value === null || value === undefined) return <span className="muted">never</span>;
  const date = toDate(value);
  if (Number.isNaN(date.getTime())) return <span className="muted">unknown</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toLocaleString()}>
      {relativeText(due ? date : new Date(Math.min(date.getTime(), now)), now)}
    </time>
  );
}
