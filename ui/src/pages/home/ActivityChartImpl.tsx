import { useEffect, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import type { ActivityView } from "../../api/console-types";

/** The console's colours (app.css variables), read again when the system switches light/dark. */
function themeColours() {
  const style = getComputedStyle(document.documentElement);
  const read = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    fg: read("--fg-muted", "#57606a"),
    grid: read("--border", "#d0d7de"),
    runs: read("--accent", "#0a58ca"),
    events: read("--success", "#1a7f37"),
    errors: read("--danger", "#b42318"),
  };
}

function useDarkMode(): boolean {
  const media = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  const [dark, setDark] = useState(media?.matches ?? false);
  useEffect(() => {
    if (!media) return;
    const changed = () => setDark(media.matches);
    media.addEventListener("change", changed);
    return () => media.removeEventListener("change", changed);
  }, [media]);
  return dark;
}

function options(width: number, colours: ReturnType<typeof themeColours>): uPlot.Options {
  const axis = { stroke: colours.fg, grid: { stroke: colours.grid, width: 1 }, ticks: { stroke: colours.grid, width: 1 } };
  return {
    width,
    height: 220,
    cursor: { drag: { x: false, y: false } },
    legend: { show: true },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [axis, { ...axis, size: 40 }],
    series: [
      {},
      { label: "Runs", stroke: colours.runs, width: 2 },
      { label: "Events", stroke: colours.events, width: 2 },
      { label: "Errors", stroke: colours.errors, width: 2, dash: [6, 3] },
    ],
  };
}

function toData(buckets: ActivityView["buckets"]): uPlot.AlignedData {
  return [
    buckets.map((bucket) => Date.parse(bucket.minute) / 1000),
    buckets.map((bucket) => bucket.runs),
    buckets.map((bucket) => bucket.events),
    buckets.map((bucket) => bucket.errors),
  ];
}

export default function ActivityChartImpl({ buckets }: { buckets: ActivityView["buckets"] }) {
  const box = useRef<HTMLDivElement>(null);
  const chart = useRef<uPlot | null>(null);
  const dark = useDarkMode();

  // (Re)built when the theme changes: uPlot draws on a canvas, so colours are fixed at creation.
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const plot = new uPlot(options(Math.max(200, element.clientWidth), themeColours()), toData(buckets), element);
    chart.current = plot;
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, element.clientWidth), height: 220 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
      chart.current = null;
    };
    // buckets are set by the effect below; only the theme rebuilds the chart.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [dark]);

  useEffect(() => {
    chart.current?.setData(toData(buckets));
  }, [buckets]);

  return <div ref={box} className="activity-chart" role="img" aria-label="Runs, events and errors per minute over the last hour" />;
}
