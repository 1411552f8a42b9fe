import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { bundleComponent } from "../../src/components/bundle.js";

/**
 * Components written as the public registry writes them (ES modules, the app
 * file imported by relative path, a shared `common` spread into each
 * definition), laid out as in its repository: `components/<app>/…`.
 */
export const REGISTRY_FILES: Record<string, string> = {
  "helper_functions/helper_functions.app.mjs": `export default {
  type: "app",
  app: "helper_functions",
  propDefinitions: {
    httpRequest: {
      type: "http_request",
      label: "HTTP Request Configuration",
    },
  },
  methods: {
    between(min, max) {
      return min + Math.floor(Math.random() * (max - min + 1));
    },
  },
};
`,
  "helper_functions/common/base.mjs": `import helperFunctions from "../helper_functions.app.mjs";

export default {
  type: "action",
  props: {
    helperFunctions,
  },
  methods: {
    summaryOf(response) {
      return \`Sent the request: \${response.status}\`;
    },
  },
};
`,
  // A required prop with a default, in an app whose slug has an underscore. (Not the hosted key
  // helper_functions-random-integer: Runnel's catalog has that one, and users cannot publish over it.)
  "helper_functions/actions/random-integer/random-integer.mjs": `import common from "../../common/base.mjs";

export default {
  ...common,
  key: "helper_functions-pick-random-integer",
  name: "Random Integer",
  description: "Generate a random integer between min and max.",
  version: "0.0.3",
  props: {
    ...common.props,
    min: {
      type: "integer",
      label: "Min",
      default: 7,
    },
    max: {
      type: "integer",
      label: "Max",
      default: 7,
    },
  },
  async run({ $ }) {
    const value = this.helperFunctions.between(this.min, this.max);
    $.export("$summary", \`Generated \${value}\`);
    return value;
  },
};
`,
  // The registry's "Send Webhook": a required http_request prop whose default only sets the method.
  "helper_functions/actions/send-http-request/send-http-request.mjs": `import common from "../../common/base.mjs";

export default {
  ...common,
  key: "helper_functions-send-http-request",
  name: "Send Webhook",
  description: "Send Webhook and Payload",
  version: "1.0.1",
  props: {
    ...common.props,
    httpRequest: {
      type: "http_request",
      label: "HTTP Request Configuration",
      default: {
        method: "POST",
      },
    },
  },
  async run({ $ }) {
    const response = await this.httpRequest.execute();
    $.export("$summary", this.summaryOf(response));
    return response;
  },
};
`,
  // The type comes from the app's propDefinition, as in the registry's "Send any HTTP Request".
  "helper_functions/actions/custom-request/custom-request.mjs": `import common from "../../common/base.mjs";

export default {
  ...common,
  key: "helper_functions-custom-request",
  name: "Send any HTTP Request",
  version: "1.1.0",
  props: {
    ...common.props,
    httpRequest: {
      propDefinition: [
        common.props.helperFunctions,
        "httpRequest",
      ],
    },
  },
  async run() {
    try {
      const response = await this.httpRequest.execute();
      return { ok: true, status: response.status, data: response.data };
    } catch (error) {
      return { ok: false, code: error.code, message: error.message };
    }
  },
};
`,
  "webhooks/webhooks.app.mjs": `export default {
  type: "app",
  app: "webhooks",
  propDefinitions: {},
  methods: {
    isValid(body) {
      return typeof body?.name === "string";
    },
  },
};
`,
  // Sends to every destination; the body is an http send's data, and a secret goes in the auth and a header value.
  "webhooks/actions/fan-out/fan-out.mjs": `import webhooks from "../../webhooks.app.mjs";

export default {
  key: "webhooks-fan-out",
  name: "Fan Out",
  type: "action",
  version: "0.2.0",
  props: {
    webhooks,
    url: {
      type: "string",
      label: "Hook URL",
    },
    fail: {
      type: "boolean",
      label: "Fail after sending",
      default: false,
    },
  },
  async run({ steps, $ }) {
    const order = steps.trigger.event.body;
    $.send.http({
      method: "POST",
      url: \`\${this.url}/hook?token=hush-query\`,
      headers: { "x-api-key": "hush-header" },
      auth: { username: "ada", password: "hush-password" },
      data: { order: order.id },
    });
    $.send.http({ method: "GET", url: \`\${this.url}/missing\` });
    $.send.emit({ raw_event: { order: order.id } });
    $.send.sse({ channel: "orders", payload: { order: order.id } });
    if (this.fail) {
      throw new Error("failed after sending");
    }
    return "sent";
  },
};
`,
  "webhooks/sources/common/base.mjs": `import webhooks from "../../webhooks.app.mjs";

export default {
  props: {
    webhooks,
    http: {
      type: "$.interface.http",
      customResponse: true,
    },
  },
  methods: {
    badRequest(message) {
      this.http.respond({ status: 400, body: { error: message } });
    },
  },
};
`,
  // Answers an error status, then (on the same path) the success it always sends: the second respond() must not fail the run.
  "webhooks/sources/new-request/new-request.mjs": `import common from "../common/base.mjs";

export default {
  ...common,
  key: "webhooks-new-request",
  name: "New Request",
  version: "0.1.0",
  async run(event) {
    if (!this.webhooks.isValid(event.body)) {
      this.badRequest("name is required");
    }
    this.http.respond({ status: "200", body: { received: true } });
    this.$emit(event.body, { summary: "request" });
  },
};
`,
  // customResponse is false: the platform answers, and respond() can only be ignored.
  "webhooks/sources/plain-request/plain-request.mjs": `import webhooks from "../../webhooks.app.mjs";

export default {
  key: "webhooks-plain-request",
  name: "Plain Request",
  version: "0.1.0",
  props: {
    webhooks,
    http: "$.interface.http",
  },
  async run(event) {
    this.http.respond({ status: 201, body: "ignored" });
    this.$emit({ got: event.body }, { summary: "plain" });
  },
};
`,
};

/** Writes the tree under a fresh folder and bundles one of its components as `runnel deploy <file>` does. */
export async function bundleRegistryComponents(): Promise<{ bundle(path: string): Promise<{ component_code: string; filename: string }>; cleanUp(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), "runnel-registry-"));
  for (const [path, text] of Object.entries(REGISTRY_FILES)) {
    const file = join(root, "components", path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  }
  return {
    async bundle(path) {
      const file = join(root, "components", path);
      const bundled = await bundleComponent({ kind: "file", path: file });
      return { component_code: bundled.code, filename: basename(file) };
    },
    cleanUp: () => rm(root, { recursive: true, force: true }),
  };
}
