import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";
import { createWorkflow, errorsOf, runsOf, waitFor } from "../workflows/helpers.js";

/** The console's replay of an error from its failed step (and with the failed run's code), in a real browser. */

const COUNT = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps }) {
    const runs = ((await this.store.get("count")) ?? 0) + 1;
    await this.store.set("count", runs);
    return { runs };
  },
})`;
const FLAGGED = `export default defineComponent({
  props: { store: { type: "data_store" } },
  async run({ steps }) {
    if (await this.store.get("broken")) throw new Error("the flag is set");
    return { runs: steps.count.$return_value.runs };
  },
})`;

describe("replaying an error from its failed step in the console", () => {
  let harness: ConsoleHarness;
  let workflow: any;
  let errorId: string;
  const steps = [
    { name: "count", code: COUNT, props: { store: "ui-replay" } },
    { name: "flagged", code: FLAGGED, props: { store: "ui-replay" } },
  ];
  const setFlag = async (broken: boolean) => expect((await call(harness.url, "PUT", "/v1/data_stores/ui-replay/records/broken", { key: harness.key, json: { value: broken } })).status).toBe(200);

  beforeAll(async () => {
    harness = await startConsole();
    await setFlag(true);
    workflow = await createWorkflow(harness.server, harness.key, { name: "Flagged checkout", steps });
    await call(harness.url, "POST", `/v1/workflows/${workflow.id}/runs`, { key: harness.key, json: { event: { n: 1 } } });
    errorId = (await waitFor(() => errorsOf(harness.server, harness.key, workflow.id), (body) => body.data.length === 1, "the error")).data[0].id;
    await setFlag(false);
  }, 240_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("replays from the failed step: the earlier step is reused, not run again; one that cannot be is listed with why", async () => {
    const page = await harness.newPage();
    page.setDefaultTimeout(10_000);
    await signIn(page, harness.key);
    await page.goto(`/errors/${workflow.id}`);
    await page.getByRole("heading", { name: "Errors of Flagged checkout" }).waitFor();
    await page.getByText("the flag is set").waitFor();

    await page.getByLabel("Start from").selectOption("failed_step");
    await page.getByLabel("Code").selectOption("failed_run");
    const row = page.getByRole("row").filter({ hasText: "the flag is set" });
    await row.getByRole("button", { name: "Replay", exact: true }).click();
    await page.getByText("Replay started: its run appears under Replays below.").waitFor();
    const replays = page.getByRole("region", { name: "Replays" });
    await replays.getByText(`replay of ${errorId} from its failed step`).waitFor();
    const runs = await runsOf(harness.server, harness.key, workflow.id);
    const replay = runs.find((run) => run.replay_of === errorId);
    expect(replay).toMatchObject({ status: "success", workflow_version: 1 });
    expect(replay.steps.map((step: any) => step.reused)).toEqual([true, false]);
    // The counting step ran once, in the failed run.
    expect((await call(harness.url, "GET", "/v1/data_stores/ui-replay/records/count", { key: harness.key })).body.data.value).toBe(1);
    await checkAccessibility(page, (shown) => shown.getByText("the flag is set").first().waitFor());

    // The failed step renamed away, with the current code: Replay all replays nothing and says why.
    const renamed = steps.map((step) => (step.name === "flagged" ? { ...step, name: "checked" } : step));
    expect((await call(harness.url, "PUT", `/v1/workflows/${workflow.id}`, { key: harness.key, json: { steps: renamed } })).status).toBe(200);
    await page.getByLabel("Code").selectOption("current");
    await page.getByRole("button", { name: "Replay all" }).click();
    const dialog = page.getByRole("dialog", { name: "Replay every error?" });
    await dialog.getByText("starting at the step that failed").waitFor();
    await dialog.getByRole("button", { name: "Replay all" }).click();
    await page.getByText("No replay started. 1 error was not replayed (why below).").waitFor();
    await page.getByRole("list", { name: "Not replayed" }).getByText('The failed step "flagged" is no longer in the workflow\'s current code').waitFor();
    expectNoBrowserErrors(page);
  }, 60_000);
});
