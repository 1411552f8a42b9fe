import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAccessibility, expectNoBrowserErrors, screenshot, signIn, startConsole, type ConsoleHarness } from "../helpers/browser.js";
import { call } from "../helpers/server.js";
import { runsOf, waitFor } from "../workflows/helpers.js";

const SHOUT = `export default defineComponent({
  async run({ steps, $ }) {
    const name = steps.trigger.event.body.name;
    $.export("$summary", "Greeted " + name);
    $.send.emit({ raw_event: { greeted: name } });
    return { greeting: "HELLO " + name.toUpperCase() };
  },
});
`;

const COUNT = `export default defineComponent({
  async run({ steps, $ }) {
    console.log("counting the greeting");
    return { letters: steps.shout.$return_value.greeting.length };
  },
});
`;

const THROW = `export default defineComponent({
  async run({ steps, $ }) {
    throw new Error("count failed on purpose");
  },
});
`;

/**
 * Replaces the whole text of a CodeMirror editor the way a person does: select
 * all, paste. (Typing many lines with insertText makes Chromium's own editing
 * add style attributes, which the console's CSP rightly refuses.)
 */
async function replaceCode(page: Page, label: string, code: string): Promise<void> {
  const editor = page.getByLabel(label, { exact: true });
  await editor.click();
  await page.keyboard.press("ControlOrMeta+A");
  // The tests' TypeScript has no DOM types: the page's globals are reached untyped.
  await editor.evaluate((element: any, text: string) => {
    const page: any = globalThis;
    const data = new page.DataTransfer();
    data.setData("text/plain", text);
    element.dispatchEvent(new page.ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, code);
  await expect.poll(() => editor.textContent()).toContain(code.split("\n")[2]!.trim());
}

describe("the console's workflows pages, in a real browser", () => {
  let harness: ConsoleHarness;

  beforeAll(async () => {
    harness = await startConsole();
  }, 240_000);
  afterAll(async () => {
    await harness?.close();
  });

  it("creates a two-step HTTP workflow, shows its run's timeline and results; then a step that throws, and its error with the stack", async () => {
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto("/workflows");
    await page.getByRole("heading", { name: "Workflows" }).waitFor();

    // Create: name, HTTP trigger (the default), two code steps.
    await page.getByRole("link", { name: "Create a workflow" }).first().click();
    await page.getByRole("heading", { name: "New workflow" }).waitFor();
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("Greeter");
    expect(await page.getByRole("radio", { name: /HTTP request/ }).isChecked()).toBe(true);
    await page.getByLabel("Name of step 1").fill("shout");
    await replaceCode(page, "Code of step 1", SHOUT);
    await page.getByRole("button", { name: "Add a code step" }).click();
    // Named like the first one: the API refuses it, and the form shows why at that step's name.
    await page.getByLabel("Name of step 2").fill("shout");
    await replaceCode(page, "Code of step 2", COUNT);
    await page.getByRole("button", { name: "Create workflow" }).click();
    const nameError = page.getByText('Two steps are named "shout"').first();
    await nameError.waitFor();
    expect(await page.getByLabel("Name of step 2").getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("Name of step 2").fill("count");
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.getByRole("heading", { name: "Edit Greeter" }).waitFor();
    const id = /\/workflows\/([^/]+)\/edit/.exec(page.url())![1]!;
    // The editor shows the saved steps again, code read back from their components.
    await expect.poll(() => page.getByLabel("Code of step 2", { exact: true }).textContent()).toContain("steps.shout.$return_value.greeting.length");
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: "Edit Greeter" }).waitFor());
    // CodeMirror measures its lines once they are in view: scroll by them before the full-page picture.
    await page.getByLabel("Code of step 2", { exact: true }).scrollIntoViewIfNeeded();
    await page.getByLabel("Code of step 1", { exact: true }).scrollIntoViewIfNeeded();
    await screenshot(page, "workflow-editor");

    // A test run with the sample event, where the server has POST /v1/workflows/<id>/runs (issue 16's console API).
    const hasRuns = (await call(harness.url, "POST", `/v1/workflows/${id}/runs?wait=true`, { key: harness.key, json: { event: { body: { name: "Probe" } } } })).status !== 404;
    await page.getByLabel("Sample event (JSON)").fill('{"body": {"name": "Tess"}}');
    await page.getByRole("button", { name: "Run with this event" }).click();
    if (hasRuns) {
      const result = page.locator(".test-run-result");
      await result.getByRole("region", { name: "Step shout" }).waitFor();
      expect(await result.textContent()).toContain('"HELLO TESS"');
    } else {
      await page.getByText("This server cannot make test runs yet").waitFor();
    }

    const workflow = (await call(harness.url, "GET", `/v1/workflows/${id}`, { key: harness.key })).body.data;
    expect(workflow.steps.map((step: { name: string }) => step.name)).toEqual(["shout", "count"]);
    const endpoint: string = workflow.trigger.endpoint_url;

    // The list: name, trigger with its endpoint.
    await page.goto("/workflows");
    await page.getByRole("link", { name: "Greeter" }).waitFor();
    expect(await page.getByText(endpoint).isVisible()).toBe(true);
    await screenshot(page, "workflows");

    // Call it, and open the run from the workflow's page.
    expect((await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Ada" }) })).status).toBe(200);
    const before = hasRuns ? 2 : 0; // the probe's and the test run's
    const [run] = await waitFor(() => runsOf(harness.server, harness.key, id), (runs) => runs.length === before + 1, "the first run");
    await page.getByRole("link", { name: "Greeter" }).click();
    await page.getByRole("heading", { name: "Greeter" }).waitFor();
    // What the run emitted, listed with its event.
    await page.getByRole("tree", { name: /^Emitted event / }).first().waitFor();
    await page.getByRole("link", { name: run.id }).click();
    await page.getByRole("heading", { name: `Run ${run.id}` }).waitFor();
    const timeline = page.getByRole("list", { name: "Timeline of the steps" });
    expect(await timeline.getByRole("listitem").count()).toBe(2);
    expect(await timeline.textContent()).toMatch(/shout.*count/);
    const shout = page.getByRole("region", { name: "Step shout" });
    const count = page.getByRole("region", { name: "Step count" });
    expect(await shout.textContent()).toContain('"HELLO ADA"');
    expect(await shout.textContent()).toContain("$summary: Greeted Ada");
    expect(await count.getByRole("tree", { name: "Return value of count" }).textContent()).toContain("9");
    expect(await count.textContent()).toContain("counting the greeting");
    await checkAccessibility(page, (shown) => shown.getByRole("heading", { name: `Run ${run.id}` }).waitFor());
    await screenshot(page, "run");

    // Make the second step throw, call it again, and open the failed run.
    await page.goto(`/workflows/${id}/edit`);
    await page.getByRole("heading", { name: "Edit Greeter" }).waitFor();
    await expect.poll(() => page.getByLabel("Code of step 2", { exact: true }).textContent()).toContain("steps.shout");
    await replaceCode(page, "Code of step 2", THROW);
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();

    await fetch(endpoint, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "Bob" }) });
    const runs = await waitFor(() => runsOf(harness.server, harness.key, id), (list) => list.length === before + 2, "the failed run");
    const failed = runs[0];
    expect(failed.status).toBe("error");
    expect(failed).toBeDefined();
    await page.goto(`/workflows/${id}`);
    await page.getByRole("link", { name: failed.id }).click();
    const error = page.getByRole("region", { name: "Error" });
    await error.waitFor();
    expect(await error.getByRole("heading").textContent()).toContain("in step count");
    expect(await error.textContent()).toContain("count failed on purpose");
    const stack = error.locator("pre.stack");
    expect(await stack.textContent()).toMatch(/Error: count failed on purpose\n\s+at /);
    expect(await page.getByRole("region", { name: "Step shout" }).textContent()).toContain('"HELLO BOB"');
    expectNoBrowserErrors(page);
  }, 60_000);

  it("shows a run waiting to retry its failed step: its status, each failed try and when the next one is due", async () => {
    const created = await call(harness.url, "POST", "/v1/workflows", {
      key: harness.key,
      json: {
        name: "Flaky",
        trigger: { type: "http" },
        respond: "immediately",
        settings: { retries: { max: 2, backoff: "fixed", delay_ms: 3_600_000 } },
        steps: [{ name: "call_api", code: "export default defineComponent({ async run() { throw new Error('the API said 503'); } })" }],
      },
    });
    expect(created.status).toBe(200);
    const id: string = created.body.data.id;
    expect((await fetch(created.body.data.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status).toBe(200);
    const [run] = await waitFor(() => runsOf(harness.server, harness.key, id), (list) => list.length === 1 && list[0].status === "retrying", "the run waiting to retry");
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto(`/workflows/${id}`);
    await page.getByRole("link", { name: run.id }).click();
    const attempts = page.getByRole("region", { name: "Attempts" });
    await attempts.waitFor();
    expect(await page.locator(".facts .status-badge").textContent()).toBe("Retrying");
    // An hour, give or take the backoff's jitter (20 %).
    expect(await attempts.textContent()).toMatch(/Waiting to retry: the next try is in (4[89]|5\d|60) minutes|Waiting to retry: the next try is in 1 hour/);
    expect(await attempts.getByRole("listitem").allTextContents()).toEqual([expect.stringMatching(/^Try 1 of step call_api failed .*: UserError: the API said 503 \(tried again\)$/)]);
    await checkAccessibility(page, (shown) => shown.getByRole("region", { name: "Attempts" }).waitFor());
    expectNoBrowserErrors(page);
  }, 60_000);

  it("pauses and activates a workflow, says why an empty name is refused, and deletes with confirmation", async () => {
    const created = await call(harness.url, "POST", "/v1/workflows", {
      key: harness.key,
      json: { name: "Nightly", trigger: { type: "timer", cron: "0 3 * * *" }, steps: [{ name: "noop", code: "export default defineComponent({ async run() { return 1; } })" }] },
    });
    expect(created.status).toBe(200);
    const id: string = created.body.data.id;
    const page = await harness.newPage({ viewport: { width: 375, height: 740 } });
    await signIn(page, harness.key);
    await page.goto(`/workflows/${id}`);
    await page.getByRole("heading", { name: "Nightly" }).waitFor();
    expect(await page.getByText("Timer, cron 0 3 * * *").isVisible()).toBe(true);
    await page.getByText("No runs yet.").waitFor();
    await page.getByText("Nothing emitted yet.").waitFor();

    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByRole("button", { name: "Activate" }).waitFor();
    expect((await call(harness.url, "GET", `/v1/workflows/${id}`, { key: harness.key })).body.data.active).toBe(false);
    await page.getByRole("button", { name: "Activate" }).click();
    await page.getByRole("button", { name: "Pause" }).waitFor();
    expect((await call(harness.url, "GET", `/v1/workflows/${id}`, { key: harness.key })).body.data.active).toBe(true);

    // The editor reads the timer back, and shows the API's refusal of an empty name at the name.
    await page.getByRole("link", { name: "Edit" }).click();
    await page.getByRole("heading", { name: "Edit Nightly" }).waitFor();
    expect(await page.getByRole("radio", { name: /Timer/ }).isChecked()).toBe(true);
    expect(await page.getByLabel("Cron expression").inputValue()).toBe("0 3 * * *");
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("name must be a non-empty string").first().waitFor();
    expect(await page.getByRole("textbox", { name: "Name", exact: true }).getAttribute("aria-invalid")).toBe("true");

    await page.goto(`/workflows/${id}`);
    await page.getByRole("button", { name: "Delete" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete Nightly?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    expect((await call(harness.url, "GET", `/v1/workflows/${id}`, { key: harness.key })).status).toBe(200);
    await page.getByRole("button", { name: "Delete" }).click();
    await dialog.getByRole("button", { name: "Delete workflow" }).click();
    await page.getByRole("heading", { name: "Workflows" }).waitFor();
    expect((await call(harness.url, "GET", `/v1/workflows/${id}`, { key: harness.key })).status).toBe(404);
    expect(await page.getByRole("link", { name: "Nightly" }).count()).toBe(0);
    expectNoBrowserErrors(page);
  }, 60_000);

  it("makes an HTTP workflow whose step is a published action, its props filled through the form with a {{ }} expression", async () => {
    const code = `export default defineComponent({
  key: "ui-shout-twice",
  name: "Shout twice",
  version: "1.2.0",
  type: "action",
  description: "Says **text** a few times.",
  props: { text: { type: "string", label: "Text" }, times: { type: "integer", label: "Times", min: 1, max: 5 } },
  async run({ $ }) { return Array(this.times).fill(this.text).join(" "); },
});
`;
    expect((await call(harness.url, "POST", "/v1/components/registry", { key: harness.key, json: { component_code: code, filename: "shout.mjs" } })).status).toBe(201);
    const page = await harness.newPage();
    await signIn(page, harness.key);
    await page.goto("/workflows/new");
    await page.getByRole("heading", { name: "New workflow" }).waitFor();
    await page.getByRole("textbox", { name: "Name", exact: true }).fill("By action");
    expect(await page.getByRole("radio", { name: /HTTP request/ }).isChecked()).toBe(true);
    await page.getByRole("button", { name: "Remove step 1" }).click();
    await page.getByRole("button", { name: "Add a published action" }).click();
    await page.getByLabel("Name of step 1").fill("twice");
    await page.getByLabel("Action of step 1").selectOption("ui-shout-twice");
    // What the action is and takes, from its published component (description as sanitized Markdown).
    await page.getByText("Shout twice").waitFor();
    expect(await page.locator(".action-about strong", { hasText: "text" }).count()).toBe(1);

    // The props form, generated from the action's props: a whole number checked before sending...
    const text = page.getByRole("textbox", { name: "Text", exact: true });
    const times = page.getByRole("textbox", { name: "Times", exact: true });
    await text.fill("{{ steps.trigger.event.body.x }}");
    await times.fill("9");
    await page.getByRole("button", { name: "Create workflow" }).click();
    const timesField = page.locator(".field", { has: times });
    await timesField.locator(".field-error").waitFor();
    expect(await timesField.locator(".field-error").textContent()).toContain("Enter 5 or less.");
    // ...and an expression where a whole number goes is sent as typed: the API checks the value it gives.
    await times.fill("{{ steps.trigger.event.body.n }}");
    // An expression reading a step that does not run before: the API refuses it, and says so at that prop's field.
    await text.fill("{{ steps.nowhere.x }}");
    await page.getByRole("button", { name: "Create workflow" }).click();
    const textField = page.locator(".field", { has: text });
    await textField.locator(".field-error").waitFor();
    expect(await textField.locator(".field-error").textContent()).toContain('reads step "nowhere"');
    expect(await text.getAttribute("aria-invalid")).toBe("true");
    await text.fill("{{ steps.trigger.event.body.x }}");
    await page.getByRole("button", { name: "Create workflow" }).click();
    await page.getByRole("heading", { name: "Edit By action" }).waitFor();
    const id = /\/workflows\/([^/]+)\/edit/.exec(page.url())![1]!;
    const saved = (await call(harness.url, "GET", `/v1/workflows/${id}`, { key: harness.key })).body.data;
    expect(saved.steps).toMatchObject([{ name: "twice", key: "ui-shout-twice", props: { text: "{{ steps.trigger.event.body.x }}", times: "{{ steps.trigger.event.body.n }}" } }]);
    // Read back into the editor as an action step, its props in the form.
    expect(await page.getByLabel("Action of step 1").inputValue()).toBe("ui-shout-twice");
    await expect.poll(() => text.inputValue()).toBe("{{ steps.trigger.event.body.x }}");

    // A plain number this time, saved as a number; then call the endpoint and see the value in the run.
    await times.fill("2");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("status").getByText("Saved.").waitFor();
    const workflow = (await call(harness.url, "GET", `/v1/workflows/${id}`, { key: harness.key })).body.data;
    expect(workflow.steps[0].props).toEqual({ text: "{{ steps.trigger.event.body.x }}", times: 2 });
    expect((await fetch(workflow.trigger.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ x: "hey" }) })).status).toBe(200);
    const [run] = await waitFor(() => runsOf(harness.server, harness.key, id), (runs) => runs.length >= 1 && runs[0].status !== "running", "the run");
    await page.goto(`/runs/${run.id}`);
    await page.getByRole("heading", { name: `Run ${run.id}` }).waitFor();
    expect(await page.getByRole("region", { name: "Step twice" }).textContent()).toContain('"hey hey"');
    expectNoBrowserErrors(page);
  }, 60_000);
});
