import { lazy, Suspense } from "react";
import type { ActivityView } from "../../api/console-types";
import { Loading } from "../../components/Loading";

// uPlot loads with the home page's chart, not with the console.
const ActivityChartImpl = lazy(() => import("./ActivityChartImpl"));

/** Runs, events and errors per minute, as a line chart (uPlot, loaded on first use). */
export function ActivityChart({ buckets }: { buckets: ActivityView["buckets"] }) {
  return (
    <Suspense fallback={<Loading label="Loading the chart…" />}>
      <ActivityChartImpl buckets={buckets} />
    </Suspense>
  );
}
