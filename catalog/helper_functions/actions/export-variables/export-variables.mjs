/** Names the platform gives a step's results itself; an export with one of them would hide them. */
const RESERVED = new Set(["$return_value", "$summary"]);

export default {
  key: "helper_functions-export-variables",
  name: "Export variables",
  description: "Exports each name and value you configure, so that later steps read them as steps.<this step>.<name> (and all of them as steps.<this step>.config).",
  version: "0.1.0",
  type: "action",
  props: {
    config: {
      type: "object",
      label: "Variables",
      description: "Names and values, such as { \"customer\": \"{{steps.trigger.event.body.customer}}\", \"limit\": 10 }.",
    },
  },
  async run({ $ }) {
    const names = Object.keys(this.config);
    for (const name of names) {
      if (RESERVED.has(name) || name === "") throw new Error(`Prop "config" has the name "${name}", which a step cannot export; rename it.`);
    }
    // The whole object too, as `config` (as the hosted action exports it), unless a variable has that name.
    if (!names.includes("config")) $.export("config", this.config);
    for (const name of names) $.export(name, this.config[name]);
    $.export("$summary", names.length === 0 ? "Exported nothing" : `Exported ${names.join(", ")}`.slice(0, 200));
    return this.config;
  },
};
