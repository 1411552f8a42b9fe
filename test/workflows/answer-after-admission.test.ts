import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { TEST_DATABASE_URL } from "../helpers/postgres.js";
import { createWorkflow } from "./helpers.js";
import { modes } from "./modes.js";

/**
 * On BullMQ, a one-at-a-time line's next run is handed over before the
 * record that admits it has committed (DeliveryHandOff.takeBeforeCommit).
 * That run's $.respond reaches its caller only once that commit is done:
 * before it, nothing durable says the event was admitted and run (a crash
 * then would run it again, after its caller had an answer). Here every
 * run's record takes 400 ms to commit (a deferred trigger), far longer
 * than the next run takes to answer.
 */
describe("a run handed over before its admission commits answers its caller after that commit (PostgreSQL, BullMQ on Redis)", () => {
  const mode = modes("runnel_answer_after").find((one) => one.name.includes("BullMQ"))!;
  let server: TestServer;
  let key: string;
  let drop: () => Promise<void>;
  let admin: pg.Client;
  let schema: string;

  beforeAll(async () => {
    const setup = await mode.env();
    drop = setup.drop;
    schema = setup.env.RUNNEL_QUEUE_NAMESPACE!;
    server = await startTestServer(setup.env);
    key = (await createUser(server, "answers")).key;
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE FUNCTION ${schema}.slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.4); RETURN NULL; END $$`);
    await admin.query(`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON ${schema}.runs DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${schema}.slow_commit()`);
  });
  afterAll(async () => {
    await admin?.end();
    await server?.close();
    await drop?.();
  });

  it("answers a caller only once the record of the run before it (which admitted its event) is committed", async () => {
    const workflow = await createWorkflow(server, key, {
      name: "Answers in turn",
      trigger: { type: "http" },
      respond: "workflow",
      settings: { concurrency: 1 },
      // Answers at once, then keeps its slot a while: the next caller's event waits in the line meanwhile.
      steps: [{ name: "answer", code: "export default defineComponent({ async run({ steps, $ }) { await $.respond({ status: 200, body: { n: steps.trigger.event.body.n } }); await new Promise((resolve) => setTimeout(resolve, 300)); } })" }],
    });
    const send = async (n: number) => {
      const answer = await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
      return { status: answer.status, body: await answer.json() };
    };
    expect(await send(0)).toEqual({ status: 200, body: { n: 0 } });
    // The first run is still going: this event waits, and is admitted by that run's record (which, the first of
    // the line's, also tells the server what kind of gate the workflow has).
    expect(await send(1)).toEqual({ status: 200, body: { n: 1 } });
    // Likewise, admitted by the second run's record, and handed over before that record has committed.
    const third = await send(2);
    const recordedWhenAnswered = Number((await admin.query(`SELECT COUNT(*) AS n FROM ${schema}.runs WHERE workflow_id = $1`, [workflow.id])).rows[0].n);
    expect(third).toEqual({ status: 200, body: { n: 2 } });
    expect(recordedWhenAnswered).toBeGreaterThanOrEqual(2);
  }, 30_000);
});
