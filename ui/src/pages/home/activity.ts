import { queryOptions } from "@tanstack/react-query";
import { ApiError, apiData } from "../../api/client";
import type { ActivityView } from "../../api/console-types";

/** The last hour, minute by minute; refreshed while the page is open. */
export const activityQuery = queryOptions({
  queryKey: ["activity", 60],
  queryFn: ({ signal }) => apiData<ActivityView>("GET", "/v1/users/me/activity", { query: { minutes: 60 }, signal }),
  refetchInterval: 30_000,
  // A server without the route answers 404 every time: asking again will not help.
  retry: (failures, error) => !isActivityMissing(error) && failures < 2,
});

/** An older server has no activity route: the page says so instead of failing. */
export function isActivityMissing(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 404 || error.status === 405);
}

export interface ActivityTotals {
  runs: number;
  events: number;
  errors: number;
}

export function totalsOf(activity: ActivityView): ActivityTotals {
  return activity.buckets.reduce((sum, bucket) => ({ runs: sum.runs + bucket.runs, events: sum.events + bucket.events, errors: sum.errors + bucket.errors }), {
    runs: 0,
    events: 0,
    errors: 0,
  });
}
