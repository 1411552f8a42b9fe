// docs/examples/sources/respond.mjs
export default {
  name: "Greeter endpoint",
  version: "0.1.0",
  props: { http: { type: "$.interface.http", customResponse: true } },
  async run(event) {
    const name = event.query.name;
    if (!name) {
      this.http.respond({ status: 400, body: { error: "add ?name=" } });
      return;
    }
    this.http.respond({ status: 201, headers: { "x-greeter": "runnel" }, body: { hello: name } });
    this.$emit({ name }, { summary: `greeted ${name}` });
  },
};
