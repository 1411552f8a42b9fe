import { describe, expect, it } from "vitest";
import { asUpdateBody, formatFieldPath, formatProblem, parseFieldPath, parseWorkflowFile, problemOfApiError, withCode, WorkflowFileError, type FileProblem } from "./workflow-file.js";

const EXAMPLE = `# a comment on line 1
name: Fetch and store
trigger:
  type: http
respond: workflow
steps:
  - name: parse
    code: |
      export default defineComponent({
        async run({ steps }) { return steps.trigger.event.body; }
      })
  - name: fetch
    code_file: ./steps/fetch.ts
    props:
      url: "{{steps.parse.$return_value.url}}"
      headers:
        accept: application/json
  - name: notify
    key: slack-send
settings:
  error_retention: 50
`;

function problemsOf(text: string): FileProblem[] {
  try {
    parseWorkflowFile(text, "workflow.yaml");
  } catch (error) {
    if (error instanceof WorkflowFileError) return error.problems;
    throw error;
  }
  throw new Error("the file parsed");
}

describe("parseWorkflowFile", () => {
  it("gives the API body, without the file-only keys, and the code files it names", () => {
    const file = parseWorkflowFile(EXAMPLE, "workflow.yaml");
    expect(file.id).toBeUndefined();
    expect(file.body).toEqual({
      name: "Fetch and store",
      trigger: { type: "http" },
      respond: "workflow",
      steps: [
        { name: "parse", code: "export default defineComponent({\n  async run({ steps }) { return steps.trigger.event.body; }\n})\n" },
        { name: "fetch", props: { url: "{{steps.parse.$return_value.url}}", headers: { accept: "application/json" } } },
        { name: "notify", key: "slack-send" },
      ],
      settings: { error_retention: 50 },
    });
    expect(file.codeFiles).toEqual([{ target: { kind: "step", index: 1 }, path: "./steps/fetch.ts", field: "steps[1].code_file", line: 13 }]);
  });

  it("takes a pinned id and a trigger component_file", () => {
    const file = parseWorkflowFile("id: p_abc\nname: x\ntrigger:\n  component_file: ./source.mjs\n  configured_props: { n: 1 }\nsteps: []\n", "w.yaml");
    expect(file.id).toBe("p_abc");
    expect(file.body).toEqual({ name: "x", trigger: { configured_props: { n: 1 } }, steps: [] });
    expect(file.codeFiles).toEqual([{ target: { kind: "trigger" }, path: "./source.mjs", field: "trigger.component_file", line: 4 }]);
  });

  it.each<[string, string, Array<Partial<FileProblem>>]>([
    ["a syntax error, with line and column", "name: x\ntrigger: a: b\n", [{ line: 2, column: 10, message: "YAML syntax: Nested mappings are not allowed in compact mappings" }]],
    ["an unclosed flow map", "name: x\ntrigger: {type: http\nsteps: []\n", [{ line: 3, column: 1 }]],
    ["a key given twice", "name: x\nname: y\n", [{ line: 2, message: "YAML syntax: Map keys must be unique" }]],
    ["an empty file", "# nothing\n", [{ line: 1, message: expect.stringContaining("The file is empty") as unknown as string }]],
    ["a list at the top", "- name: x\n", [{ line: 1, message: expect.stringContaining("not a mapping") as unknown as string }]],
    [
      "unknown keys at the top, in a step, the trigger and settings",
      "name: x\nstpes: []\ntrigger:\n  type: timer\n  interval: 5\nsteps:\n  - name: a\n    code: x\n    prop: {}\nsettings:\n  retention: 3\n",
      [
        { line: 2, field: "stpes", message: expect.stringContaining("did you mean steps?") as unknown as string },
        { line: 5, field: "trigger.interval" },
        { line: 11, field: "settings.retention" },
        { line: 9, field: "steps[0].prop", message: expect.stringContaining("did you mean props?") as unknown as string },
      ],
    ],
    ["code and code_file both", "name: x\nsteps:\n  - name: a\n    code: x\n    code_file: ./a.ts\n", [{ line: 5, field: "steps[0].code_file", message: "give code or code_file, not both." }]],
    ["a code_file that is not a path", "name: x\nsteps:\n  - name: a\n    code_file: 3\n", [{ line: 4, field: "steps[0].code_file" }]],
    ["component_file with component_code", "name: x\ntrigger:\n  component_code: x\n  component_file: ./s.mjs\n", [{ line: 4, field: "trigger.component_file" }]],
    ["an id that is not a workflow's", "id: dc_123\nname: x\n", [{ line: 1, field: "id" }]],
  ])("refuses %s", (_what, text, expected) => {
    const problems = problemsOf(text);
    expect(problems).toHaveLength(expected.length);
    expected.forEach((want, index) => expect(problems[index]).toMatchObject({ file: "workflow.yaml", ...want }));
  });

  it("prints a syntax error as file:line:column with the line and a caret", () => {
    const message = new WorkflowFileError(problemsOf("name: x\ntrigger: a: b\n")).message;
    expect(message).toBe("workflow.yaml:2:10: YAML syntax: Nested mappings are not allowed in compact mappings\n  trigger: a: b\n           ^");
  });
});

describe("locate: an API field at its line", () => {
  const file = parseWorkflowFile(EXAMPLE, "workflow.yaml");
  it.each<[string, number, string]>([
    ["name", 2, "name"],
    ["trigger", 3, "trigger"],
    ["trigger.type", 4, "trigger.type"],
    ["respond", 5, "respond"],
    ["steps", 6, "steps"],
    ["steps[0]", 7, "steps[0]"],
    ["steps[0].name", 7, "steps[0].name"],
    ["steps[0].code", 8, "steps[0].code"],
    ["steps[1].props.url", 15, "steps[1].props.url"],
    ["steps[1].props.headers.accept", 17, "steps[1].props.headers.accept"],
    // The schema's form of the same paths.
    ["steps.1.props.url", 15, "steps[1].props.url"],
    ["steps.2.key", 19, "steps[2].key"],
    // Code given by path: the path's line, named as in the file.
    ["steps[1].code", 13, "steps[1].code_file"],
    ["steps[1].filename", 13, "steps[1].code_file"],
    // Missing from the file: the nearest ancestor's line, the API's name.
    ["trigger.intervalSeconds", 3, "trigger.intervalSeconds"],
    ["steps[1].props.missing", 14, "steps[1].props.missing"],
    ["steps[2].props", 18, "steps[2].props"],
    ["steps[7].name", 6, "steps[7].name"],
    ["settings.error_notifications", 20, "settings.error_notifications"],
    ["active", 2, "active"],
    ["body", 2, "body"],
  ])("%s → line %i", (field, line, shown) => {
    expect(file.locate(field)).toEqual({ line, field: shown });
  });

  it("moves into a | block by the code's own line", () => {
    expect(file.locate("steps[0].code", 2)).toEqual({ line: 10, field: "steps[0].code" });
    // Not for code given by path: that line is in another file.
    expect(file.locate("steps[1].code", 2)).toEqual({ line: 13, field: "steps[1].code_file" });
  });

  it("maps a refused request to `file:line: field: message`", () => {
    const timer = parseWorkflowFile("name: Tick\ntrigger:\n  type: timer\n  intervalSeconds: 0\nsteps: []\n", "flows/tick.yaml");
    const problem = problemOfApiError(timer, {
      message: "trigger.intervalSeconds must be a whole number of seconds, at least 1; got 0.",
      details: { field: "trigger.intervalSeconds" },
    });
    expect(formatProblem(problem!)).toBe("flows/tick.yaml:4: trigger.intervalSeconds: trigger.intervalSeconds must be a whole number of seconds, at least 1; got 0.");
    expect(problemOfApiError(timer, { message: "no field" })).toBeNull();
    expect(problemOfApiError(timer, { message: "x", details: { hook: "deploy" } })).toBeNull();
  });
});

describe("field paths", () => {
  it.each<[string, Array<string | number>, string]>([
    ["name", ["name"], "name"],
    ["steps[1].props.url", ["steps", 1, "props", "url"], "steps[1].props.url"],
    ["steps.1.props.url", ["steps", 1, "props", "url"], "steps[1].props.url"],
    ["steps[0].props.list[2].x", ["steps", 0, "props", "list", 2, "x"], "steps[0].props.list[2].x"],
    ["a[1][2]", ["a", 1, 2], "a[1][2]"],
  ])("%s", (field, path, formatted) => {
    expect(parseFieldPath(field)).toEqual(path);
    expect(formatFieldPath(path)).toBe(formatted);
  });
});

describe("withCode and asUpdateBody", () => {
  it("puts a bundle in the step or the trigger", () => {
    const body = { name: "x", trigger: { configured_props: {} }, steps: [{ name: "a", code: "1" }, { name: "b", props: { p: 1 } }] };
    expect(withCode(body, { target: { kind: "step", index: 1 }, path: "./b.ts", field: "steps[1].code_file", line: 3 }, { code: "B", filename: "b.ts" }).steps).toEqual([
      { name: "a", code: "1" },
      { name: "b", props: { p: 1 }, code: "B", filename: "b.ts" },
    ]);
    expect(withCode(body, { target: { kind: "trigger" }, path: "./s.mjs", field: "trigger.component_file", line: 2 }, { code: "S", filename: "s.mjs" }).trigger).toEqual({
      configured_props: {},
      component_code: "S",
    });
    expect(body.steps[1]).toEqual({ name: "b", props: { p: 1 } });
  });

  it("gives respond and settings their defaults when the file leaves them out", () => {
    expect(asUpdateBody({ name: "x" })).toEqual({ name: "x", respond: "immediately", settings: { error_notifications: true, error_retention: 100 } });
    expect(asUpdateBody({ respond: "workflow", settings: { error_retention: 5 } })).toEqual({ respond: "workflow", settings: { error_notifications: true, error_retention: 5 } });
  });
});

describe("subscriptions in a workflow file", () => {
  it("reads them apart from the API body, each at its line, the default channel as empty", () => {
    const file = parseWorkflowFile("name: W\nsubscriptions:\n  - emitter: billing\n  - emitter: p_1\n    event_name: $errors\nsteps: []\n", "w.yaml");
    expect(file.body).toEqual({ name: "W", steps: [] });
    expect(file.subscriptions).toEqual([
      { emitter: "billing", eventName: "", line: 3, field: "subscriptions[0]" },
      { emitter: "p_1", eventName: "$errors", line: 4, field: "subscriptions[1]" },
    ]);
  });

  it("refuses a list that is not one of {emitter, event_name}, at the line", () => {
    expect(problemsOf("name: W\nsubscriptions: billing\n")).toMatchObject([{ line: 2, field: "subscriptions" }]);
    expect(problemsOf("name: W\nsubscriptions:\n  - event_name: x\n")).toMatchObject([{ line: 3, field: "subscriptions[0].emitter" }]);
    expect(problemsOf("name: W\nsubscriptions:\n  - emitter: a\n    channel: x\n")).toMatchObject([{ line: 4, field: "subscriptions[0].channel" }]);
    expect(problemsOf("name: W\nsubscriptions:\n  - emitter: a\n    event_name: [x]\n")).toMatchObject([{ line: 4, field: "subscriptions[0].event_name" }]);
  });
});
