import { afterAll, describe, expect, it } from "vitest";
import { SandboxFixture } from "./helpers.js";

const fixture = new SandboxFixture();
afterAll(() => fixture.close());

const APP = `
  module.exports = defineApp({
    type: "app",
    app: "acme",
    propDefinitions: {
      projectId: {
        type: "string",
        label: "Project",
        description: "The project to watch",
        async options({ page, team }) {
          const projects = await this.listProjects(team);
          return projects.map((name) => ({ label: name + " (page " + page + ")", value: name }));
        },
      },
    },
    methods: {
      async listProjects(team) { return [team + "/" + this.$auth.api_key]; },
      _base() { return "https://api.acme.test"; },
    },
  });
`;

const COMPONENT = `
  const acme = require("./acme.app.js");
  module.exports = defineSource({
    key: "acme-new-project",
    name: "New Project",
    version: "0.1.0",
    type: "source",
    description: "Emits each new project",
    dedupe: "unique",
    props: {
      acme,
      db: "$.service.db",
      timer: { type: "$.interface.timer", default: { intervalSeconds: 900 } },
      team: { type: "string", label: "Team", options: ["red", "blue"] },
      limit: { type: "integer", min: 1, max: 100, default: 10, optional: true },
      projectId: { propDefinition: [acme, "projectId", (configured) => ({ team: configured.team })], optional: true },
      color: { type: "string", async options() { return [this.acme._base()]; } },
    },
    methods: { helper() { return 1; }, other() {} },
    hooks: { async deploy() {}, async activate() {} },
    async additionalProps() { return { extra: { type: "string", options: () => [] } }; },
    async run() {},
  });
`;

describe("inspect", () => {
  const bundle = fixture.bundle(COMPONENT, { files: { "acme.app.js": APP } });

  it("describes a component: static fields, props with functions marked, propDefinitions resolved, app props", async () => {
    const result = await fixture.sandbox.inspect(bundle, { timeoutMs: 5_000 });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.manifest).toEqual({
      key: "acme-new-project",
      name: "New Project",
      version: "0.1.0",
      type: "source",
      description: "Emits each new project",
      dedupe: "unique",
      props: {
        acme: {
          type: "app",
          app: "acme",
          propDefinitions: { projectId: { type: "string", label: "Project", description: "The project to watch", options: { $fn: true } } },
          methods: ["listProjects", "_base"],
        },
        db: { type: "$.service.db" },
        timer: { type: "$.interface.timer", default: { intervalSeconds: 900 } },
        team: { type: "string", label: "Team", options: ["red", "blue"] },
        limit: { type: "integer", min: 1, max: 100, default: 10, optional: true },
        projectId: { type: "string", label: "Project", description: "The project to watch", options: { $fn: true }, optional: true },
        color: { type: "string", options: { $fn: true } },
      },
      methods: ["helper", "other"],
      hooks: ["deploy", "activate"],
      hasRun: true,
      hasAdditionalProps: true,
    });
    expect(Object.keys(result.manifest.props)).toEqual(["acme", "db", "timer", "team", "limit", "projectId", "color"]);
  });

  it("runs an app's options as the app, with $auth and the propDefinition's input values", async () => {
    const props = { acme: { $auth: { api_key: "k1" } }, team: "red" };
    const fromApp = await fixture.invoke(bundle, { props, call: { kind: "options", prop: "projectId", args: { page: 0 } } });
    expect(fromApp.error).toBeUndefined();
    expect(fromApp.value).toEqual([{ label: "red/k1 (page 0)", value: "red/k1" }]);
    const own = await fixture.invoke(bundle, { props, call: { kind: "options", prop: "color", args: {} } });
    expect(own.value).toEqual(["https://api.acme.test"]);
    const additional = await fixture.invoke(bundle, { props, call: { kind: "method", method: "additionalProps", args: [] } });
    expect(additional.value).toEqual({ extra: { type: "string", options: { $fn: true } } });
  });

  it("keeps the label, description and optional of an app prop written inline", async () => {
    const inline = fixture.bundle(`module.exports = { name: "x", props: { gh: { type: "app", app: "github", label: "Work account", description: "Where issues are read", optional: true } }, run() {} };`);
    const result = await fixture.sandbox.inspect(inline);
    expect(result).toMatchObject({ ok: true, manifest: { props: { gh: { type: "app", app: "github", label: "Work account", description: "Where issues are read", optional: true } } } });
  });

  it("names a propDefinition the app does not define", async () => {
    const broken = fixture.bundle(
      `const acme = require("./acme.app.js"); module.exports = { name: "x", props: { acme, p: { propDefinition: [acme, "nope"] } }, run() {} };`,
      { files: { "acme.app.js": APP } },
    );
    const result = await fixture.sandbox.inspect(broken);
    expect(result).toMatchObject({ ok: false, error: { code: "InvalidComponent" } });
    if (!result.ok) expect(result.error.message).toBe(`props.p.propDefinition refers to "nope", which app "acme" does not define in its propDefinitions.`);
  });
});
