export default {
  key: "helper_functions-end-workflow",
  name: "End workflow",
  description: "Ends the workflow run here, with a reason: the steps after this one are skipped, and the run is marked exited (not an error).",
  version: "0.1.0",
  type: "action",
  props: {
    reason: {
      type: "string",
      label: "Reason",
      description: "Why the run ended, shown with the run (runnel runs).",
      default: "Ended by the End workflow step",
      optional: true,
    },
  },
  async run({ $ }) {
    const reason = typeof this.reason === "string" && this.reason.trim() !== "" ? this.reason : "Ended by the End workflow step";
    return $.flow.exit(reason);
  },
};
