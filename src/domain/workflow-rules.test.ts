import { describe, expect, it } from "vitest";
import { ValidationError } from "./errors.js";
import { validateWorkflowInput } from "./workflow-rules.js";

const step = (name: string, props: Record<string, unknown> = {}) => ({ name, code: "export default defineComponent({ async run() {} })", props });
const valid = { name: "Orders", trigger: { type: "http" }, steps: [step("fetch"), step("notify", { id: "{{steps.fetch.$return_value.id}}" })] };

describe("validateWorkflowInput", () => {
  it("normalises a valid workflow, with the default settings", () => {
    expect(validateWorkflowInput(valid)).toEqual({
      name: "Orders",
      trigger: { kind: "http" },
      steps: [
        { name: "fetch", props: {}, code: valid.steps[0]!.code },
        { name: "notify", props: { id: "{{steps.fetch.$return_value.id}}" }, code: valid.steps[1]!.code },
      ],
      respond: "immediately",
      settings: { errorNotifications: true, errorRetention: 100 },
    });
  });

  it.each([
    [{ type: "timer", intervalSeconds: 60 }, { kind: "timer", intervalSeconds: 60 }],
    [{ type: "timer", cron: "0 * * * *" }, { kind: "timer", cron: "0 * * * *" }],
    [{ source_id: "dc_abc" }, { kind: "source", sourceId: "dc_abc" }],
    [{ key: "github-new-issue", configured_props: { repo: "x" } }, { kind: "component", key: "github-new-issue", configuredProps: { repo: "x" } }],
  ])("reads the trigger %j", (trigger, expected) => {
    expect(validateWorkflowInput({ ...valid, trigger }).trigger).toEqual(expected);
  });

  it("takes published actions by key, respond and settings", () => {
    const input = validateWorkflowInput({
      ...valid,
      steps: [{ name: "send", key: "slack-send-message", props: { text: "{{steps.trigger.event.body.text}}" } }],
      respond: "workflow",
      settings: { error_notifications: false, error_retention: 500 },
    });
    expect(input.steps[0]).toEqual({ name: "send", key: "slack-send-message", props: { text: "{{steps.trigger.event.body.text}}" } });
    expect(input.respond).toBe("workflow");
    expect(input.settings).toEqual({ errorNotifications: false, errorRetention: 500 });
  });

  it("takes environment variables ({{process.env.NAME}}), alone or inside text", () => {
    const steps = [step("a", { token: "{{process.env.API_TOKEN}}", url: "https://{{process.env.HOST_1}}/x" })];
    expect(validateWorkflowInput({ ...valid, steps }).steps[0]!.props).toEqual(steps[0]!.props);
  });

  it("takes a workflow without trigger: it runs on what it subscribes to", () => {
    expect(validateWorkflowInput({ ...valid, trigger: undefined }).trigger).toEqual({ kind: "none" });
  });

  it.each([
    [{ ...valid, name: "" }, "name"],
    [{ ...valid, trigger: "http" }, "trigger"],
    [{ ...valid, trigger: undefined, respond: "workflow" }, "respond"],
    [{ ...valid, trigger: { type: "email" } }, "trigger.type"],
    [{ ...valid, trigger: { type: "timer", intervalSeconds: 0 } }, "trigger.intervalSeconds"],
    [{ ...valid, trigger: { type: "timer" } }, "trigger"],
    [{ ...valid, trigger: { source_id: "p_x" } }, "trigger.source_id"],
    [{ ...valid, steps: "all of them" }, "steps"],
    [{ ...valid, steps: [{ name: "a" }] }, "steps[0]"],
    [{ ...valid, steps: [{ name: "a", code: "x", key: "y" }] }, "steps[0]"],
    [{ ...valid, steps: [step("has space")] }, "steps[0].name"],
    [{ ...valid, steps: [step("trigger")] }, "steps[0].name"],
    [{ ...valid, steps: [step("a"), step("a")] }, "steps[1].name"],
    [{ ...valid, steps: [step("a", { x: "{{steps.b.value}}" }), step("b")] }, "steps[0].props.x"],
    [{ ...valid, steps: [step("a", { x: ["ok", "{{ 1 + 1 }}"] })] }, "steps[0].props.x[1]"],
    [{ ...valid, steps: [step("a", { x: "{{env.SECRET}}" })] }, "steps[0].props.x"],
    [{ ...valid, steps: [step("a", { x: "{{process.env}}" })] }, "steps[0].props.x"],
    [{ ...valid, steps: [step("a", { x: "{{process.env.TOKEN.length}}" })] }, "steps[0].props.x"],
    [{ ...valid, steps: [step("a", { x: "{{process.argv}}" })] }, "steps[0].props.x"],
    [{ ...valid, respond: "later" }, "respond"],
    [{ ...valid, settings: { error_retention: 0 } }, "settings.error_retention"],
    [{ ...valid, settings: { error_notifications: "no" } }, "settings.error_notifications"],
  ])("refuses %# naming %s", (input, field) => {
    try {
      validateWorkflowInput(input);
      expect.unreachable("should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe(field);
    }
  });
});
