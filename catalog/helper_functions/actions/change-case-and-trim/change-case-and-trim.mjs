export default {
  key: "helper_functions-change-case-and-trim",
  name: "Change text case and trim",
  description: "Trims spaces and changes text to lower, upper, title, sentence, camel, snake or kebab case.",
  version: "0.1.0",
  type: "action",
  props: {
    text: {
      type: "string",
      label: "Text",
      description: "The text to change.",
    },
    textCase: {
      type: "string",
      label: "Case",
      description: "The case to change the text to.",
      options: [
        { label: "Leave as it is", value: "unchanged" },
        { label: "lower case", value: "lower" },
        { label: "UPPER CASE", value: "upper" },
        { label: "Title Case", value: "title" },
        { label: "Sentence case", value: "sentence" },
        { label: "camelCase", value: "camel" },
        { label: "snake_case", value: "snake" },
        { label: "kebab-case", value: "kebab" },
      ],
      default: "unchanged",
      optional: true,
    },
    trim: {
      type: "string",
      label: "Trim",
      description: "Which ends to remove spaces and line breaks from.",
      options: [
        { label: "Both ends", value: "both" },
        { label: "Start", value: "start" },
        { label: "End", value: "end" },
        { label: "Neither", value: "none" },
      ],
      default: "both",
      optional: true,
    },
    collapseSpaces: {
      type: "boolean",
      label: "Collapse spaces",
      description: "Turn every run of spaces, tabs and line breaks inside the text into one space.",
      default: false,
      optional: true,
    },
  },
  async run({ $ }) {
    let text = trimmed(this.text, this.trim ?? "both");
    if (this.collapseSpaces) text = text.replace(/\s+/g, " ");
    const result = changeCase(text, this.textCase ?? "unchanged");
    $.export("$summary", `Changed ${this.text.length} characters`);
    return result;
  },
};

function trimmed(text, ends) {
  if (ends === "start") return text.trimStart();
  if (ends === "end") return text.trimEnd();
  if (ends === "none") return text;
  return text.trim();
}

/** The words of the text for camel, snake and kebab case: split at spaces, punctuation and lower-to-upper turns. */
function words(text) {
  return text
    .replace(/([\p{Ll}\d])(\p{Lu})/gu, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean)
    .map((word) => word.toLowerCase());
}

function changeCase(text, textCase) {
  switch (textCase) {
    case "lower":
      return text.toLowerCase();
    case "upper":
      return text.toUpperCase();
    case "title":
      return text.toLowerCase().replace(/(^|[^\p{L}\p{N}'’])(\p{L})/gu, (_, before, letter) => before + letter.toUpperCase());
    case "sentence": {
      const lower = text.toLowerCase();
      return lower.replace(/(^\s*|[.!?]\s+)(\p{L})/gu, (_, before, letter) => before + letter.toUpperCase());
    }
    case "camel":
      return words(text)
        .map((word, index) => (index === 0 ? word : word.charAt(0).toUpperCase() + word.slice(1)))
        .join("");
    case "snake":
      return words(text).join("_");
    case "kebab":
      return words(text).join("-");
    default:
      return text;
  }
}
