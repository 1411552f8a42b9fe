import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

/** The example component of the brief: CommonJS, an HTTP endpoint, a db and one required string prop. */
export const ECHO_JS = `module.exports = {
  name: "Echo",
  version: "0.1.0",
  props: { http: { type: "$.interface.http" }, db: "$.service.db", label: { type: "string" } },
  async run(event) { this.$emit({ body: event.body, label: this.label }, { summary: "got " + event.method }) },
};
`;

/** An app file and a shared helper, imported by relative path as registry components do. */
const GREETER_APP = `export default {
  type: "app",
  app: "greeter",
  propDefinitions: { label: { type: "string", label: "Who to greet" } },
  methods: { greet(name) { return \`hello \${name}\`; } },
};
`;

const COMMON_BASE = `export default {
  props: { http: { type: "$.interface.http" } },
  methods: { origin() { return "from-common"; } },
};
`;

const GREET_MJS = `import greeter from "../../greeter.app.mjs";
import common from "../common/base.mjs";

export default {
  ...common,
  key: "greet",
  name: "Greet",
  version: "0.1.0",
  props: { ...common.props, greeter, label: { propDefinition: [greeter, "label"] } },
  async run(event) {
    console.log("greeting", this.label);
    this.$emit({ greeting: this.greeter.greet(this.label), origin: this.origin() }, { summary: "greeted" });
  },
};
`;

const DOUBLER_TS = `interface Doubled {
  input: number;
  doubled: number;
}
const double = (n: number, factor: number): Doubled => ({ input: n, doubled: n * factor });

export default {
  name: "Doubler",
  version: "0.1.0",
  props: { factor: { type: "integer", optional: true, default: 2 } },
  async run(this: any, event: { n?: number } | undefined) {
    this.$emit(double(event?.n ?? 1, this.factor), { summary: "doubled" });
  },
};
`;

const BROKEN_JS = `module.exports = { name: "Broken", version: "0.1.0", async run() { throw new Error("boom on purpose"); } };
`;

/** Throws from a helper imported by relative path: its stack names both files as they are on disk. */
const FAILING_MJS = `import { check } from "../common/check.mjs";

export default {
  name: "Failing",
  version: "0.1.0",
  async run() {
    check(41);
  },
};
`;

const CHECK_MJS = `export function check(n) {
  // Only the answer will do.
  if (n !== 42) throw new RangeError("not the answer: " + n);
}
`;

export const FIXTURES = {
  echo: "echo.js",
  greet: "components/sources/greet/greet.mjs",
  doubler: "doubler.ts",
  broken: "broken.js",
  failing: "components/sources/failing/failing.mjs",
} as const;

/** Writes the fixture components under `root`. */
export async function writeFixtures(root: string): Promise<void> {
  const files: Record<string, string> = {
    [FIXTURES.echo]: ECHO_JS,
    [FIXTURES.greet]: GREET_MJS,
    "components/greeter.app.mjs": GREETER_APP,
    "components/sources/common/base.mjs": COMMON_BASE,
    [FIXTURES.doubler]: DOUBLER_TS,
    [FIXTURES.broken]: BROKEN_JS,
    [FIXTURES.failing]: FAILING_MJS,
    "components/sources/common/check.mjs": CHECK_MJS,
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}
