import { holds, OPERATORS } from "../../common/filter-conditions.mjs";

const show = (value) => {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
};

export default {
  key: "helper_functions-filter",
  name: "Filter",
  description:
    "Lets the workflow continue only if a condition holds (a value compared with another, or checked on its own); otherwise the run ends here, marked exited.",
  version: "0.1.0",
  type: "action",
  props: {
    value: {
      type: "any",
      label: "Value",
      description: "What to test, such as {{steps.trigger.event.body.amount}}.",
      optional: true,
    },
    operator: {
      type: "string",
      label: "Condition",
      description: "How to test it. Numbers (and numeric text) compare as numbers, ISO dates as dates, anything else as text.",
      options: OPERATORS.map(({ value, label }) => ({ value, label })),
    },
    compareTo: {
      type: "any",
      label: "Compare with",
      description: 'The other side of the comparison (for "matches": a regular expression, such as ^order-\\d+$). Not used by exists, is empty, is true and their opposites.',
      optional: true,
    },
    caseSensitive: {
      type: "boolean",
      label: "Case sensitive",
      description: "Whether text comparisons tell upper from lower case.",
      default: true,
      optional: true,
    },
    reason: {
      type: "string",
      label: "Reason when it does not hold",
      description: "What the ended run says. Left empty: the condition and the values.",
      optional: true,
    },
  },
  async run({ $ }) {
    const operator = OPERATORS.find((candidate) => candidate.value === this.operator);
    if (operator?.binary && this.compareTo === undefined) {
      throw new Error(`Prop "compareTo" is required with the condition "${operator.label}": give the value to compare with.`);
    }
    const description = operator?.binary ? `${show(this.value)} ${operator.label} ${show(this.compareTo)}` : `${show(this.value)} ${operator?.label ?? this.operator}`;
    if (holds(this.operator, this.value, this.compareTo, this.caseSensitive ?? true)) {
      $.export("$summary", `Continued: ${description}`);
      return { passed: true, condition: description };
    }
    const reason = typeof this.reason === "string" && this.reason.trim() !== "" ? this.reason : `Filter: it is not true that ${description}, so the run ended here.`;
    return $.flow.exit(reason);
  },
};
