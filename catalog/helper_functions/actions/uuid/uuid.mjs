import { randomUUID } from "node:crypto";

export default {
  key: "helper_functions-uuid",
  name: "Generate a UUID",
  description: "Returns a random version 4 UUID.",
  version: "0.1.0",
  type: "action",
  props: {},
  async run({ $ }) {
    const uuid = randomUUID();
    $.export("$summary", `Generated ${uuid}`);
    return uuid;
  },
};
