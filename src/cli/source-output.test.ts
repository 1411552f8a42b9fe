import { describe, expect, it } from "vitest";
import type { SourceView } from "../client/api-client.js";
import { sourceLines, triggerOf } from "./source-output.js";

/** A source as the API shows it, with only what the output reads filled in. */
const source = (configured_props: Record<string, unknown>) =>
  ({ id: "dc_1", name: "Mornings", name_slug: "mornings", active: true, endpoint_url: null, configured_props, component_id: "sc_1", updated_at: 0 }) as unknown as SourceView;

describe("a source's timer in the CLI", () => {
  it("names a cron timer's zone, and keeps it off the prop lines", () => {
    const zoned = source({ timer: { cron: "30 9 * * *", interval_seconds: null, timezone: "Europe/Paris" }, greeting: "hi" });
    expect(triggerOf(zoned)).toBe("cron 30 9 * * * (Europe/Paris)");
    const lines = sourceLines(zoned, { component: false });
    expect(lines).toContain("  timer:     cron 30 9 * * * (Europe/Paris)");
    expect(lines.filter((line) => line.startsWith("  prop:"))).toEqual(['  prop:      greeting = "hi"']);
  });

  it("shows a timer without a zone as before", () => {
    expect(triggerOf(source({ timer: { cron: "0 * * * *", interval_seconds: null } }))).toBe("cron 0 * * * *");
    expect(triggerOf(source({ timer: { cron: null, interval_seconds: 60 } }))).toBe("every 60 s");
  });
});
