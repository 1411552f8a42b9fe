import { describe, expect, it } from "vitest";
import type { ClaimedDelivery } from "../../store/store.js";
import { deliveriesToGiveUp, MAX_FAILED_RECORDINGS, type ExecutionsLookup } from "./give-up.js";

function delivery(listenerId: string, eventId: string, attempts: number): ClaimedDelivery {
  return { listenerId, emitterId: "dc_trigger", eventId, ownerId: "u_1", subscriptionId: "s", channel: "$default", status: "running", attempts, interruptions: 0, availableAt: 0, createdAt: 0, event: {}, indexedAtMs: 0 } as ClaimedDelivery;
}

describe("deliveriesToGiveUp", () => {
  it("counts only the claims a run did not ask for: a run deep in its retries is kept", async () => {
    const deep = delivery("p_flow", "1-0", 14); // 12 executions recorded, then 2 failed recordings
    const broken = delivery("p_flow", "2-0", 14); // 3 executions recorded, then 11 failed recordings
    const fresh = delivery("p_flow", "3-0", MAX_FAILED_RECORDINGS); // no waiting run: every claim failed
    const lookup: ExecutionsLookup = async () => [
      { emitterId: "dc_trigger", eventId: "1-0", attempt: 12 },
      { emitterId: "dc_trigger", eventId: "2-0", attempt: 3 },
    ];
    expect(await deliveriesToGiveUp([deep, broken, fresh], lookup)).toEqual([broken, fresh]);
  });

  it("gives nothing of a workflow up while the store cannot say how many executions its runs had", async () => {
    const failing: ExecutionsLookup = async () => {
      throw new Error("connection refused");
    };
    expect(await deliveriesToGiveUp([delivery("p_flow", "1-0", 30)], failing)).toEqual([]);
  });

  it("gives up a source's or webhook's delivery after its attempts, without asking the store", async () => {
    let asked = false;
    const lookup: ExecutionsLookup = async () => {
      asked = true;
      return [];
    };
    const source = delivery("dc_listener", "1-0", MAX_FAILED_RECORDINGS);
    const young = delivery("wh_hook", "2-0", MAX_FAILED_RECORDINGS - 1);
    expect(await deliveriesToGiveUp([source, young], lookup)).toEqual([source]);
    expect(asked).toBe(false);
  });
});
