import { describe, expect, it } from "vitest";
import { ValidationError } from "./errors.js";
import { evaluateProp, hasExpressions, parsePath } from "./expressions.js";

const scope = {
  steps: {
    trigger: { event: { body: { id: 42, name: "Ada", tags: ["a", "b"], "odd key": true } } },
    fetch: { $return_value: { items: [{ id: "x1" }, { id: "x2" }] }, count: 2 },
  },
};

describe("parsePath", () => {
  it.each([
    ["steps.trigger.event", ["steps", "trigger", "event"]],
    ["steps.fetch.$return_value.items[1].id", ["steps", "fetch", "$return_value", "items", 1, "id"]],
    ['steps.trigger.event.body["odd key"]', ["steps", "trigger", "event", "body", "odd key"]],
    ["  steps.a  ", ["steps", "a"]],
  ])("reads %s", (source, expected) => expect(parsePath(source)).toEqual(expected));

  it.each(["1 + 1", "steps.a()", "steps..a", "steps[a]", "steps.a; x", "(steps)"])("refuses %s", (source) => {
    expect(() => parsePath(source)).toThrow();
  });
});

describe("evaluateProp", () => {
  it.each([
    ["{{steps.trigger.event.body.id}}", 42],
    ["{{ steps.trigger.event.body.tags }}", ["a", "b"]],
    ["{{steps.fetch.$return_value.items[1].id}}", "x2"],
    ['{{steps.trigger.event.body["odd key"]}}', true],
    ["Hello {{steps.trigger.event.body.name}}, you have {{steps.fetch.count}} items", "Hello Ada, you have 2 items"],
    ["ids: {{steps.fetch.$return_value.items[0]}}", 'ids: {"id":"x1"}'],
    ["{{steps.missing.thing}}", undefined],
    ["missing: {{steps.missing.thing}}.", "missing: ."],
    ["no expression", "no expression"],
    ["{{steps.trigger.constructor}}", undefined],
  ])("evaluates %j", (value, expected) => {
    expect(evaluateProp(value, scope, "steps[0].props.x")).toEqual(expected);
  });

  it("evaluates inside arrays and objects", () => {
    const value = { url: "https://api/{{steps.trigger.event.body.id}}", list: ["{{steps.fetch.count}}", 3], flag: false };
    expect(evaluateProp(value, scope, "steps[1].props")).toEqual({ url: "https://api/42", list: [2, 3], flag: false });
  });

  it("names the step and prop of an expression it cannot read", () => {
    try {
      evaluateProp({ url: "{{ steps.a + 1 }}" }, scope, "steps[2].props");
      expect.unreachable("should have thrown");
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).field).toBe("steps[2].props.url");
      expect((error as ValidationError).message).toMatch(/not a path/);
    }
  });

  it("tells values with expressions from plain ones", () => {
    expect(hasExpressions({ a: ["x", "{{steps.b}}"] })).toBe(true);
    expect(hasExpressions({ a: ["x", "{ not }"] })).toBe(false);
  });
});
