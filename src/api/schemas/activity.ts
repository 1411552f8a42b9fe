import { Type, type Static } from "@sinclair/typebox";
import { ACTIVITY_MAX_MINUTES, fillMinutes, type ActivityWindow } from "../../domain/activity.js";

export const ActivityQuerySchema = Type.Object(
  {
    minutes: Type.Optional(
      Type.Integer({ minimum: 1, maximum: ACTIVITY_MAX_MINUTES, default: 60, description: `The window: this many minutes up to now, 1 to ${ACTIVITY_MAX_MINUTES} (default 60).` }),
    ),
  },
  { additionalProperties: false },
);

export const ActivitySchema = Type.Object(
  {
    buckets: Type.Array(
      Type.Object({
        minute: Type.String({ format: "date-time", description: "The minute's start (ISO 8601)" }),
        runs: Type.Integer({ description: "Workflow runs that started in it" }),
        events: Type.Integer({ description: "Events your sources emitted in it (of those still kept)" }),
        errors: Type.Integer({ description: "Of the runs, those that failed" }),
      }),
      { description: "One per minute of the window, oldest first, zeros included" },
    ),
    failing_workflows: Type.Array(
      Type.Object({
        id: Type.String({ description: "p_…" }),
        name: Type.String(),
        errors: Type.Integer({ description: "Failed runs in the window" }),
        last_error_at: Type.String({ format: "date-time", description: "When the newest failed run ended" }),
      }),
      { description: "Workflows with failed runs in the window, most failures first, up to 10" },
    ),
  },
  { title: "Activity" },
);
export type ActivityView = Static<typeof ActivitySchema>;

export function toActivityView(window: ActivityWindow, now: number, minutes: number): ActivityView {
  return {
    buckets: fillMinutes(now, minutes, window.minutes).map((bucket) => ({
      minute: new Date(bucket.startMs).toISOString(),
      runs: bucket.runs,
      events: bucket.events,
      errors: bucket.errors,
    })),
    failing_workflows: window.failing.map((workflow) => ({
      id: workflow.id,
      name: workflow.name,
      errors: workflow.errors,
      last_error_at: new Date(workflow.lastErrorAt).toISOString(),
    })),
  };
}
