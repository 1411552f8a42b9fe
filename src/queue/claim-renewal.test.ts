import pino from "pino";
import { afterEach, expect, it } from "vitest";
import { ClaimRenewal } from "./claim-renewal.js";

const logger = pino({ level: "silent" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const renewals: ClaimRenewal[] = [];
afterEach(async () => {
  for (const renewal of renewals.splice(0)) await renewal.stop();
});

/** A renewal whose rounds are counted; `answer` says what each round answers (held still, or a failure). */
function counted(leaseMs: number, answer: (round: number) => boolean | Error) {
  const state = { rounds: 0 };
  const renewal = new ClaimRenewal({
    leaseMs,
    logger,
    renew: async () => {
      state.rounds += 1;
      const answered = answer(state.rounds);
      if (answered instanceof Error) throw answered;
      return answered;
    },
  });
  renewals.push(renewal);
  return { renewal, state };
}

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 10_000) throw new Error("not reached within 10 s");
    await sleep(20);
  }
}

it("renews nothing before a claim, then renews while claims are held, and stops once none is", async () => {
  const { renewal, state } = counted(300, (round) => round < 3);
  await sleep(400);
  expect(state.rounds).toBe(0);
  renewal.held();
  await until(() => state.rounds >= 3);
  // The third round found nothing held: no fourth until the next claim.
  await sleep(500);
  expect(state.rounds).toBe(3);
  renewal.held();
  await until(() => state.rounds >= 4);
});

it("keeps trying a renewal that fails for one lease after the last claim, then gives up until the next claim", async () => {
  const { renewal, state } = counted(300, () => new Error("the queue does not answer"));
  renewal.held();
  await until(() => state.rounds >= 2);
  await sleep(600);
  const given = state.rounds;
  // A lease (300 ms) at one round per 100 ms: a few rounds, then none.
  expect(given).toBeLessThanOrEqual(4);
  await sleep(400);
  expect(state.rounds).toBe(given);
});

it("renews no more once stopped (close), claims held or not", async () => {
  const { renewal, state } = counted(300, () => true);
  renewal.held();
  await until(() => state.rounds >= 1);
  await renewal.stop();
  const stoppedAt = state.rounds;
  await sleep(400);
  expect(state.rounds).toBe(stoppedAt);
  renewal.held();
  await sleep(400);
  expect(state.rounds).toBe(stoppedAt);
});
