export default {
  key: "helper_functions-extract-by-regular-expression",
  name: "Extract with a regular expression",
  description: "Finds every match of a regular expression in text, with each match's position and capture groups (numbered and named).",
  version: "0.1.0",
  type: "action",
  props: {
    text: {
      type: "string",
      label: "Text",
      description: "The text to search.",
    },
    pattern: {
      type: "string",
      label: "Pattern",
      description: "A JavaScript regular expression without slashes, such as `order (?<id>\\d+)`.",
    },
    flags: {
      type: "string",
      label: "Flags",
      description: "Any of i (ignore case), m (multi-line), s (dot matches newlines), u (unicode). Every match is found, with or without g.",
      default: "",
      optional: true,
    },
  },
  async run({ $ }) {
    const flags = this.flags ?? "";
    if (!/^[gimsuyd]*$/.test(flags) || new Set(flags).size !== flags.length) {
      throw new Error(`Prop "flags" is "${flags}"; it may hold each of g, i, m, s, u, y, d once.`);
    }
    let expression;
    try {
      expression = new RegExp(this.pattern, flags.includes("g") ? flags : `${flags}g`);
    } catch (error) {
      throw new Error(`Prop "pattern" is not a valid regular expression: ${error.message}`);
    }
    const matches = [];
    for (const found of this.text.matchAll(expression)) {
      matches.push({ match: found[0], index: found.index, groups: found.slice(1), named: found.groups ? { ...found.groups } : {} });
    }
    $.export("$summary", matches.length === 0 ? "No match" : `${matches.length} match${matches.length === 1 ? "" : "es"}`);
    $.export("first", matches[0]?.match ?? null);
    return matches;
  },
};
