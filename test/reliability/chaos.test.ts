import { describe, expect, it } from "vitest";
import { runChaos } from "../../src/chaos/chaos-run.js";

/**
 * A short `npm run chaos`: the real server binary (from dist/, which
 * `npm test` builds first) under load, SIGKILLed three times. Nothing
 * acknowledged may be lost or doubled, on either store.
 */
describe("the server SIGKILLed under load", () => {
  // A restarted server takes back at once the runs the kill cut off: all of them on SQLite, its own leases on PostgreSQL.
  it.each([["sqlite"], ["postgres"]] as const)("on %s loses and doubles nothing it acknowledged", async (store) => {
    const report = await runChaos({ kills: 3, seconds: 10, store, concurrency: 4 });
    for (const target of [report.source, report.workflow, report.answering]) {
      expect(target.acknowledged).toBeGreaterThan(0);
      expect(target.lost).toBe(0);
      expect(target.doubled).toBe(0);
      expect(target.stored).toBe(target.acknowledged);
    }
    expect(report.workflow.runsCompleted).toBeGreaterThanOrEqual(report.workflow.acknowledged);
    expect(report.answering.runsCompleted).toBeGreaterThanOrEqual(report.answering.acknowledged);
  }, 180_000);
});
