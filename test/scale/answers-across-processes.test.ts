import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresLiveChannel } from "../../src/queue/bullmq/postgres-live-channel.js";
import { carryAnswersAcross } from "../../src/engine/workflows/answers-across-processes.js";
import { WorkflowResponses } from "../../src/engine/workflows/workflow-responses.js";
import { requirePostgres, TEST_DATABASE_URL } from "../helpers/postgres.js";

/**
 * `$.respond` answers between two "processes" (two live channels on one
 * PostgreSQL, each with its own WorkflowResponses), over real NOTIFY:
 * the one limited to 8000 bytes a message.
 */
const logger = pino({ level: "silent" });

describe("answers across processes over PostgreSQL NOTIFY", () => {
  const wire = `answers_test_${randomBytes(4).toString("hex")}`;
  let apiChannel: PostgresLiveChannel;
  let workerChannel: PostgresLiveChannel;
  const api = new WorkflowResponses();
  const worker = new WorkflowResponses();
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    await requirePostgres();
    apiChannel = new PostgresLiveChannel(TEST_DATABASE_URL, wire, logger);
    workerChannel = new PostgresLiveChannel(TEST_DATABASE_URL, wire, logger);
    stops.push(await carryAnswersAcross(api, apiChannel, logger, true));
    stops.push(await carryAnswersAcross(worker, workerChannel, logger, false));
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    await apiChannel?.close();
    await workerChannel?.close();
  });

  it("hands the caller waiting in the api process the worker's answer, a binary body of 50 KB whole and in order", async () => {
    const body = new Uint8Array(randomBytes(50_000));
    const waiting = api.wait("dc_source", "1-0", 10_000);
    worker.settle("dc_source", "1-0", { kind: "response", response: { status: 202, headers: { "x-a": ["1", "2"] }, body } });
    const end = await waiting;
    expect(end).toEqual({ kind: "response", response: { status: 202, headers: { "x-a": ["1", "2"] }, body } });
  });

  it("holds an answer that came before its caller asked, and passes a run's end without $.respond", async () => {
    const end = { kind: "ended", status: "error", runId: "r_1", workflowName: "W", stepName: "step" } as const;
    worker.settle("dc_source", "2-0", end);
    // No caller yet: the answer waits in the api process (a short while) for the one that asks.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await api.wait("dc_source", "2-0", 1_000)).toEqual(end);
  });

  it("answers a caller in the worker's own process there, without the wire", async () => {
    const waiting = worker.wait("dc_source", "3-0", 1_000);
    worker.settle("dc_source", "3-0", { kind: "response", response: { status: 200, headers: {}, body: "here" } });
    expect(await waiting).toEqual({ kind: "response", response: { status: 200, headers: {}, body: "here" } });
    // Nothing went over: the api process has no answer to hold for it.
    expect(await api.wait("dc_source", "3-0", 300)).toBeNull();
  });
});
