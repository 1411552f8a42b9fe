import { randomInt } from "node:crypto";

export default {
  key: "helper_functions-random-integer",
  name: "Random integer",
  description: "Returns a random whole number between a minimum and a maximum, both included, from a cryptographic source.",
  version: "0.1.0",
  type: "action",
  props: {
    min: {
      type: "integer",
      label: "Minimum",
      description: "The smallest number that may come out.",
      default: 0,
      optional: true,
    },
    max: {
      type: "integer",
      label: "Maximum",
      description: "The largest number that may come out.",
      default: 10000,
      optional: true,
    },
  },
  async run({ $ }) {
    const min = this.min ?? 0;
    const max = this.max ?? 10000;
    if (min > max) throw new Error(`Prop "min" (${min}) is greater than prop "max" (${max}); swap them.`);
    // randomInt's range is [min, max) and at most 2^48 wide.
    if (max - min >= 2 ** 48 - 1) throw new Error(`The range from "min" to "max" is too wide (at most 2^48 - 1 numbers); narrow it.`);
    const value = randomInt(min, max + 1);
    $.export("$summary", `Picked ${value} from ${min} to ${max}`);
    return value;
  },
};
