import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCliInProcess } from "../helpers/child.js";
import { call, createUser, startTestServer, type TestServer } from "../helpers/server.js";
import { createTestSchema } from "../helpers/postgres.js";
import { createWorkflow } from "../workflows/helpers.js";

/** An app file as existing components' apps are written (ESM), with a version so that it can be published. */
const esmApp = (over: { slug?: string | null; version?: string; greeting?: string; extra?: string } = {}) => `export default {
  type: "app",
  ${over.slug === null ? "" : `app: ${JSON.stringify(over.slug ?? "acme_crm")},`}
  version: ${JSON.stringify(over.version ?? "0.1.0")},
  description: "Acme CRM: contacts and deals",
  propDefinitions: {
    contactId: { type: "string", label: "Contact", description: "The contact's id" },
    ${over.extra ?? ""}
  },
  methods: {
    greet(name) { return ${JSON.stringify(over.greeting ?? "hello")} + " " + name; },
    _baseUrl() { return "https://api.acme.test"; },
  },
};
`;

/** The same shape in TypeScript, with a type annotation the bundler strips. */
const TS_APP = `interface Contact { id: string }
export default defineApp({
  type: "app",
  app: "typed_app",
  name: "Typed App",
  version: "1.0.0",
  propDefinitions: { limit: { type: "integer", label: "Limit", min: 1, max: 10, default: 5 } },
  methods: {
    first(contacts: Contact[]): string { return contacts[0]?.id ?? "none"; },
  },
});
`;

describe("app files published to the registry on their own (issue 17)", () => {
  let server: TestServer;
  let ada: { id: string; key: string };
  const publish = (key: string, code: string, filename = "acme_crm.app.mjs") =>
    call(server.url, "POST", "/v1/components/registry", { key, json: { component_code: code, filename } });
  const registry = (key: string, query: string) => call(server.url, "GET", `/v1/components/registry${query}`, { key });

  beforeAll(async () => {
    server = await startTestServer();
    ada = await createUser(server, "ada");
  });
  afterAll(() => server?.close());

  it("publishes an ESM app file under its slug (201), the same again is 200, and it reads back by key", async () => {
    const published = await publish(ada.key, esmApp());
    expect(published.status).toBe(201);
    expect(published.body.data).toMatchObject({
      key: "acme_crm",
      version: "0.1.0",
      kind: "app",
      namespace: "user",
      app: {
        app: "acme_crm",
        name: "acme_crm",
        version: "0.1.0",
        description: "Acme CRM: contacts and deals",
        prop_definitions: [{ name: "contactId", type: "string", label: "Contact", description: "The contact's id" }],
        methods: ["greet", "_baseUrl"],
      },
    });
    expect(published.body.data.component).toBeUndefined();
    expect((await publish(ada.key, esmApp())).status).toBe(200);

    const got = await registry(ada.key, "/acme_crm");
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(published.body.data);
  });

  it("publishes a TypeScript app file (defineApp, annotations) the same way", async () => {
    const published = await publish(ada.key, TS_APP, "typed.app.ts");
    expect(published.status).toBe(201);
    expect(published.body.data).toMatchObject({
      key: "typed_app",
      kind: "app",
      app: { name: "Typed App", methods: ["first"], prop_definitions: [{ name: "limit", type: "integer", min: 1, max: 10, default: 5 }] },
    });
  });

  it("versions an app like a component: other code under the same version is 409, a bump is a new version listed first", async () => {
    const changed = await publish(ada.key, esmApp({ greeting: "hi" }));
    expect(changed.status).toBe(409);
    expect(changed.body.error.message).toContain("acme_crm@0.1.0 is published already with other code");
    expect(changed.body.error.message).toContain("0.1.1");

    const bumped = await publish(ada.key, esmApp({ greeting: "hi", version: "0.2.0" }));
    expect(bumped.status).toBe(201);
    const listed = await registry(ada.key, "?type=app");
    const acme = listed.body.data.find((item: { key: string }) => item.key === "acme_crm");
    expect(acme).toMatchObject({ type: "app", version: "0.2.0", namespace: "user", configurable_props: [] });
    expect(acme.versions.map((entry: { version: string }) => entry.version)).toEqual(["0.2.0", "0.1.0"]);
    // An older version is still there by its number.
    expect((await registry(ada.key, "/acme_crm?version=0.1.0")).body.data.version).toBe("0.1.0");
  });

  it("lists apps with type=app only, finds them by words and by app, and keeps them out of type=source", async () => {
    const apps = await registry(ada.key, "?type=app&limit=100");
    expect(apps.status).toBe(200);
    expect(apps.body.data.map((item: { key: string }) => item.key)).toEqual(["acme_crm", "typed_app"]);
    expect(apps.body.data.every((item: { type: string }) => item.type === "app")).toBe(true);

    const byWords = await registry(ada.key, "?q=contacts%20deals");
    expect(byWords.body.data.map((item: { key: string }) => item.key)).toEqual(["acme_crm"]);
    expect((await registry(ada.key, "?app=typed_app")).body.data.map((item: { key: string }) => item.key)).toEqual(["typed_app"]);

    const sources = await registry(ada.key, "?type=source&limit=100");
    expect(sources.body.data.some((item: { type: string }) => item.type === "app")).toBe(false);
    // Another user's registry does not hold them.
    const bob = await createUser(server, "bob");
    expect((await registry(bob.key, "?type=app")).body.data).toEqual([]);
    expect((await registry(ada.key, "?type=plugin")).status).toBe(400);
  });

  it("names what is wrong with a bad app file: the slug, a prop definition's type, a method that is no function", async () => {
    const noSlug = await publish(ada.key, esmApp({ slug: null }));
    expect(noSlug.status).toBe(400);
    expect(noSlug.body.error.details.field).toBe("app");
    expect(noSlug.body.error.message).toContain("An app file needs app: its name slug");

    const badSlug = await publish(ada.key, esmApp({ slug: "Acme CRM" }));
    expect(badSlug.status).toBe(400);
    expect(badSlug.body.error.details.field).toBe("app");

    const unknownType = await publish(ada.key, esmApp({ version: "0.3.0", extra: `dealId: { type: "strnig", label: "Deal" },` }));
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.error.details.field).toBe("propDefinitions.dealId.type");
    expect(unknownType.body.error.message).toContain('unknown type "strnig"');

    const notFunction = await publish(ada.key, esmApp({ version: "0.3.0" }).replace("methods: {", 'methods: {\n    baseUrl: "https://api.acme.test",'));
    expect(notFunction.status).toBe(400);
    expect(notFunction.body.error.details.field).toBe("methods.baseUrl");
    expect(notFunction.body.error.message).toContain("must be a function");

    const noVersion = await publish(ada.key, esmApp().replace('version: "0.1.0",', ""));
    expect(noVersion.status).toBe(400);
    expect(noVersion.body.error.details.field).toBe("version");
  });

  it("refuses to deploy an app by key (400 naming key), and refuses app code given as a component", async () => {
    const deployed = await call(server.url, "POST", "/v1/sources", { key: ada.key, json: { key: "acme_crm" } });
    expect(deployed.status).toBe(400);
    expect(deployed.body.error.details.field).toBe("key");
    expect(deployed.body.error.message).toContain("acme_crm is an app, not a component: an app is not deployed");
    expect(deployed.body.error.message).toContain('{ type: "app", app: "acme_crm" }');

    const asStep = await call(server.url, "POST", "/v1/workflows", { key: ada.key, json: { name: "Step by app key", trigger: { type: "manual" }, steps: [{ name: "crm", key: "acme_crm" }] } });
    expect(asStep.status).toBe(400);
    expect(asStep.body.error.details.field).toBe("steps[0].key");
    expect(asStep.body.error.message).toContain("acme_crm is an app, not a component");

    const asCode = await call(server.url, "POST", "/v1/sources", { key: ada.key, json: { component_code: esmApp(), filename: "acme.app.mjs" } });
    expect(asCode.status).toBe(400);
    expect(asCode.body.error.message).toContain('This is an app file (type: "app"), not a component');
  });

  it("keeps app slugs and component keys apart: a component cannot take an app's key", async () => {
    const component = `export default { key: "acme_crm", name: "Clash", version: "1.0.0", type: "action", async run() { return 1; } };`;
    const clash = await publish(ada.key, component, "clash.mjs");
    expect(clash.status).toBe(409);
    expect(clash.body.error.message).toContain("acme_crm is the key of an app you published");
  });

  it("gives a component whose inline app prop has no methods the published app's methods and propDefinitions (its newest release)", async () => {
    const user = await createUser(server, "cleo");
    expect((await publish(user.key, esmApp({ greeting: "hello", version: "1.0.0" }))).status).toBe(201);
    const step = `export default defineComponent({
  props: { crm: { type: "app", app: "acme_crm", label: "Work CRM" } },
  async run() { return { greeting: this.crm.greet("ada"), auth: this.crm.$auth }; },
});`;
    const workflow = await createWorkflow(server, user.key, { name: "Uses the CRM", trigger: { type: "manual" }, steps: [{ name: "greet", code: step }] });
    const ran = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs?wait=true`, { key: user.key, json: { event: {} } });
    expect(ran.body.data).toMatchObject({ status: "success", steps: [{ name: "greet", status: "success", $return_value: { greeting: "hello ada", auth: {} } }] });

    // The saved component describes the app prop with the app's definitions and methods, and keeps its own label.
    const saved = await call(server.url, "POST", "/v1/components", {
      key: user.key,
      json: { component_code: step.replace("defineComponent({", 'defineComponent({ name: "CRM user", version: "0.0.1", type: "action",'), filename: "crm-user.mjs" },
    });
    expect(saved.status).toBe(200);
    expect(saved.body.data.configurable_props).toEqual([{ name: "crm", type: "app", app: "acme_crm", label: "Work CRM" }]);

    // A new release is what the next save links; the component saved before keeps the version it was linked to.
    expect((await publish(user.key, esmApp({ greeting: "howdy", version: "1.1.0" }))).status).toBe(201);
    const again = await createWorkflow(server, user.key, { name: "Uses the new CRM", trigger: { type: "manual" }, steps: [{ name: "greet", code: step }] });
    const second = await call(server.url, "POST", `/v1/workflows/${again.id}/runs?wait=true`, { key: user.key, json: { event: {} } });
    expect(second.body.data.steps[0].$return_value.greeting).toBe("howdy ada");

    // A user without that app: the prop stays as written, and calling a method fails saying it is not a function.
    const other = await createUser(server, "dora");
    const lonely = await createWorkflow(server, other.key, { name: "No CRM", trigger: { type: "manual" }, steps: [{ name: "greet", code: step }] });
    const failed = await call(server.url, "POST", `/v1/workflows/${lonely.id}/runs?wait=true`, { key: other.key, json: { event: {} } });
    expect(failed.body.data.status).not.toBe("success");
    expect(failed.body.data.steps[0].status).toBe("error");

    // An error thrown in the app's method names the app's own file and line, through the linked bundle's map.
    const throwing = esmApp({ version: "1.2.0" }).replace("methods: {", 'methods: {\n    fail() { throw new Error("the CRM said no"); },');
    expect((await publish(user.key, throwing, "acme_crm.app.mjs")).status).toBe(201);
    const failing = step.replace('this.crm.greet("ada")', "this.crm.fail()");
    const third = await createWorkflow(server, user.key, { name: "CRM fails", trigger: { type: "manual" }, steps: [{ name: "greet", code: failing }] });
    const crashed = await call(server.url, "POST", `/v1/workflows/${third.id}/runs?wait=true`, { key: user.key, json: { event: {} } });
    expect(crashed.body.data.error.msg).toBe("the CRM said no");
    expect(crashed.body.data.error.stack).toContain("at Object.fail (acme_crm.app.mjs:11:20)");
    expect(crashed.body.data.error.stack).toMatch(/at Object\.run \(component\.ts:3:\d+\)/);
  });

  it("`runnel list registry --type app` shows the app row", async () => {
    const home = await mkdtemp(join(tmpdir(), "runnel-app-files-"));
    try {
      const env = { RUNNEL_SERVER_URL: server.url, RUNNEL_API_KEY: ada.key, HOME: home, XDG_CONFIG_HOME: home };
      const listed = await runCliInProcess(["list", "registry", "--type", "app"], { env });
      expect(listed.code).toBe(0);
      const row = listed.stdout.split("\n").find((line) => line.includes("acme_crm"));
      expect(row).toBeDefined();
      expect(row).toMatch(/acme_crm\s.*app\s.*0\.2\.0/);
      expect(listed.stderr).toContain("An app is used by components through an app prop");

      await writeFile(join(home, "other.app.mjs"), esmApp({ slug: "other_crm" }));
      const published = await runCliInProcess(["publish", join(home, "other.app.mjs")], { env });
      expect(published.stderr).toBe("");
      expect(published.stdout.trim()).toBe("Published other_crm@0.1.0 (app)");

      const deploy = await runCliInProcess(["deploy", "other_crm"], { env });
      expect(deploy.code).not.toBe(0);
      expect(deploy.stderr).toContain(`"other_crm" is an app, not a component`);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});

describe("app files in the registry, on PostgreSQL", () => {
  it("publishes a version once under concurrent publishes, orders versions by semver, and links the newest release into a step", async () => {
    const schema = await createTestSchema("runnel_apps");
    const server = await startTestServer({ DATABASE_URL: schema.databaseUrl });
    try {
      const { key } = await createUser(server, "pia");
      const publish = (code: string) => call(server.url, "POST", "/v1/components/registry", { key, json: { component_code: code, filename: "acme_crm.app.mjs" } });
      const racing = await Promise.all([1, 2, 3].map(() => publish(esmApp({ version: "1.9.0", greeting: "nine" }))));
      expect(racing.map((answer) => answer.status).sort()).toEqual([200, 200, 201]);
      expect((await publish(esmApp({ version: "1.10.0", greeting: "ten" }))).status).toBe(201);
      expect((await publish(esmApp({ version: "2.0.0-beta.1", greeting: "beta" }))).status).toBe(201);
      const rows = await schema.admin.query(`SELECT version FROM ${schema.schema}.registry_apps WHERE slug = 'acme_crm'`);
      expect(rows.rows.map((row) => row.version).sort()).toEqual(["1.10.0", "1.9.0", "2.0.0-beta.1"]);
      const listed = await call(server.url, "GET", "/v1/components/registry?type=app", { key });
      expect(listed.body.data).toMatchObject([{ key: "acme_crm", version: "1.10.0", versions: [{ version: "2.0.0-beta.1" }, { version: "1.10.0" }, { version: "1.9.0" }] }]);

      const step = `export default defineComponent({ props: { crm: { type: "app", app: "acme_crm" } }, async run() { return this.crm.greet("pia"); } });`;
      const workflow = await createWorkflow(server, key, { name: "CRM on PostgreSQL", trigger: { type: "manual" }, steps: [{ name: "greet", code: step }] });
      const ran = await call(server.url, "POST", `/v1/workflows/${workflow.id}/runs?wait=true`, { key, json: { event: {} } });
      expect(ran.body.data.steps[0].$return_value).toBe("ten pia");
    } finally {
      await server.close();
      await schema.drop();
    }
  }, 60_000);
});
