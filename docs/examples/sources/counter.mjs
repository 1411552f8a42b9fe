// docs/examples/sources/counter.mjs
export default {
  name: "Counter",
  version: "0.1.0",
  props: { http: "$.interface.http", db: "$.service.db" },
  hooks: {
    async deploy() {
      this.db.set("count", 0); // once, when the source is first deployed
    },
    async activate() {
      // on deploy, on every update, and when turned on again
      this.db.set("activations", (this.db.get("activations") ?? 0) + 1);
    },
    async deactivate() {
      // on update, on delete, and when turned off
      console.log(`deactivated at count ${this.db.get("count")}`);
    },
  },
  async run() {
    const count = this.db.get("count") + 1;
    this.db.set("count", count);
    this.$emit({ count, activations: this.db.get("activations") });
  },
};
