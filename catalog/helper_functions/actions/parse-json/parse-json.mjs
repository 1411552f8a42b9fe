import { locateJsonError } from "../../../common/json-error.mjs";

export default {
  key: "helper_functions-parse-json",
  name: "Parse JSON",
  description: "Turns JSON text into a value later steps can read field by field. Text that is not JSON fails the step, saying where it goes wrong.",
  version: "0.1.0",
  type: "action",
  props: {
    input: {
      type: "any",
      label: "JSON text",
      description: 'The text to parse, such as {{steps.trigger.event.body}} or {"id": 1}. A value that is already an object or a list is returned as it is.',
    },
  },
  async run({ $ }) {
    const input = this.input;
    if (typeof input !== "string") {
      if (input === undefined) throw new Error('Prop "input" is empty: give the JSON text to parse.');
      $.export("$summary", "The input was already parsed: returned as it is");
      return input;
    }
    try {
      const value = JSON.parse(input);
      $.export("$summary", `Parsed ${Array.isArray(value) ? `a list of ${value.length}` : value === null ? "null" : `a${typeof value === "object" ? "n object" : " " + typeof value}`}`);
      return value;
    } catch {
      const where = locateJsonError(input);
      if (where === null) throw new Error('Prop "input" could not be parsed as JSON.');
      const lineText = input.split("\n")[where.line - 1] ?? "";
      const from = Math.max(0, where.column - 40);
      const excerpt = lineText.slice(from, where.column + 40);
      throw new Error(
        `Prop "input" is not valid JSON: ${where.problem}, at line ${where.line}, column ${where.column} (position ${where.position}).\n` +
          `  ${excerpt}\n  ${" ".repeat(where.column - 1 - from)}^`,
      );
    }
  },
};
