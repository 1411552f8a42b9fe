import { describe, expect, it } from "vitest";
import { validateAppFile } from "./app-files.js";
import type { ComponentManifest } from "./component-manifest.js";
import { ValidationError } from "./errors.js";

const manifest = (over: Partial<ComponentManifest> = {}): ComponentManifest => ({
  type: "app",
  app: "acme_crm",
  version: "1.0.0",
  propDefinitions: { contactId: { type: "string", label: "Contact" } },
  appMethods: { greet: { $fn: true } },
  props: {},
  methods: ["greet"],
  hooks: [],
  hasRun: false,
  hasAdditionalProps: false,
  ...over,
});

function fieldOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.field;
    throw error;
  }
  throw new Error("no ValidationError");
}

describe("validateAppFile", () => {
  it("takes the slug as key and name when there is no name, with definitions in order and method names", () => {
    expect(validateAppFile(manifest())).toMatchObject({ slug: "acme_crm", name: "acme_crm", version: "1.0.0", description: null, methods: ["greet"], propDefinitions: [{ name: "contactId", type: "string", label: "Contact" }] });
    expect(validateAppFile(manifest({ name: "Acme CRM", propDefinitions: undefined, appMethods: undefined }))).toMatchObject({ name: "Acme CRM", propDefinitions: [], methods: [] });
  });

  it("accepts a definition either kind of component may use (any is for actions, a timer for sources)", () => {
    expect(validateAppFile(manifest({ propDefinitions: { payload: { type: "any" }, timer: { type: "$.interface.timer", default: { intervalSeconds: 60 } } } })).propDefinitions.map((prop) => prop.type)).toEqual(["any", "$.interface.timer"]);
  });

  it("names the field of each mistake", () => {
    expect(fieldOf(() => validateAppFile(manifest({ app: undefined })))).toBe("app");
    expect(fieldOf(() => validateAppFile(manifest({ app: "Acme CRM" })))).toBe("app");
    expect(fieldOf(() => validateAppFile(manifest({ app: "acme__crm" })))).toBe("app");
    expect(fieldOf(() => validateAppFile(manifest({ version: undefined })))).toBe("version");
    expect(fieldOf(() => validateAppFile(manifest({ key: "other" })))).toBe("key");
    expect(fieldOf(() => validateAppFile(manifest({ propDefinitions: { deal: { type: "strnig" } } })))).toBe("propDefinitions.deal.type");
    expect(fieldOf(() => validateAppFile(manifest({ propDefinitions: { deal: { type: "string", optional: "yes" } } })))).toBe("propDefinitions.deal.optional");
    expect(fieldOf(() => validateAppFile(manifest({ propDefinitions: [] })))).toBe("propDefinitions");
    expect(fieldOf(() => validateAppFile(manifest({ appMethods: { baseUrl: "https://x" } })))).toBe("methods.baseUrl");
    expect(fieldOf(() => validateAppFile(manifest({ appMethods: "nope" })))).toBe("methods");
  });
});
