const OPERATIONS = ["sum", "average", "median", "min", "max", "product", "round"];

export default {
  key: "helper_functions-math-on-numbers",
  name: "Math on numbers",
  description: "Sums, averages, finds the median, minimum, maximum or product of a list of numbers, or rounds each of them.",
  version: "0.1.0",
  type: "action",
  props: {
    numbers: {
      type: "any",
      label: "Numbers",
      description: 'A list of numbers, or of numeric text such as "12.5" (or JSON text of a list).',
    },
    operation: {
      type: "string",
      label: "Operation",
      description: "What to compute. Round rounds each number and returns the list.",
      options: [
        { label: "Sum", value: "sum" },
        { label: "Average", value: "average" },
        { label: "Median", value: "median" },
        { label: "Minimum", value: "min" },
        { label: "Maximum", value: "max" },
        { label: "Product", value: "product" },
        { label: "Round each", value: "round" },
      ],
      default: "sum",
      optional: true,
    },
    decimals: {
      type: "integer",
      label: "Decimals",
      description: "Round the result to this many decimals. Left empty: not rounded (Round each: 0).",
      min: 0,
      max: 15,
      optional: true,
    },
  },
  async run({ $ }) {
    const operation = this.operation ?? "sum";
    if (!OPERATIONS.includes(operation)) throw new Error(`Prop "operation" is "${operation}"; it must be one of ${OPERATIONS.join(", ")}.`);
    const numbers = numbersFrom(this.numbers);
    if (numbers.length === 0 && operation !== "sum" && operation !== "round") throw new Error(`Prop "numbers" is an empty list; ${operation} needs at least one number.`);
    const decimals = this.decimals ?? (operation === "round" ? 0 : undefined);
    const result = operation === "round" ? numbers.map((n) => round(n, decimals)) : round(compute(operation, numbers), decimals);
    $.export("$summary", `${operation} of ${numbers.length} number${numbers.length === 1 ? "" : "s"}: ${Array.isArray(result) ? result.join(", ") : result}`.slice(0, 200));
    return result;
  },
};

function numbersFrom(value) {
  let list = value;
  if (typeof list === "string") {
    try {
      list = JSON.parse(list);
    } catch {
      throw new Error('Prop "numbers" is text that is not a JSON list; give a list such as [1, 2.5, "3"].');
    }
  }
  if (!Array.isArray(list)) throw new Error(`Prop "numbers" must be a list of numbers; got ${list === null ? "null" : typeof list}.`);
  return list.map((item, index) => {
    const number = typeof item === "string" && item.trim() !== "" ? Number(item) : item;
    if (typeof number !== "number" || !Number.isFinite(number)) {
      throw new Error(`Prop "numbers": item ${index} (${JSON.stringify(item)}) is not a number.`);
    }
    return number;
  });
}

function compute(operation, numbers) {
  switch (operation) {
    case "sum":
      return numbers.reduce((total, n) => total + n, 0);
    case "average":
      return numbers.reduce((total, n) => total + n, 0) / numbers.length;
    case "median": {
      const sorted = [...numbers].sort((a, b) => a - b);
      const middle = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }
    case "min":
      return numbers.reduce((least, n) => Math.min(least, n));
    case "max":
      return numbers.reduce((most, n) => Math.max(most, n));
    default:
      return numbers.reduce((product, n) => product * n, 1);
  }
}

/** Rounds half away from zero, as people do, and through exponent notation so that 1.005 rounds to 1.01. */
function round(n, decimals) {
  if (decimals === undefined) return n;
  const sign = n < 0 ? -1 : 1;
  return sign * Number(`${Math.round(Number(`${Math.abs(n)}e${decimals}`))}e-${decimals}`);
}
