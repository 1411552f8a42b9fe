/** The starting code `runnel init` writes: ES modules, as most existing components are. */
export interface SourceTemplateOptions {
  http?: boolean | undefined;
  timer?: boolean | undefined;
  db?: boolean | undefined;
}

export function sourceTemplate(key: string, name: string, options: SourceTemplateOptions): string {
  const props: string[] = [];
  if (options.http) props.push(`    http: { type: "$.interface.http" },`);
  if (options.timer) props.push(`    timer: { type: "$.interface.timer", default: { intervalSeconds: 15 * 60 } },`);
  if (options.db) props.push(`    db: "$.service.db",`);
  const body: string[] = [];
  if (options.db) {
    body.push(`    // this.db keeps JSON values between runs.`, `    const count = (this.db.get("count") ?? 0) + 1;`, `    this.db.set("count", count);`);
  }
  const count = options.db ? ", count" : "";
  if (options.http && options.timer) {
    body.push(
      `    // A request has a method; a timer tick has a timestamp.`,
      `    const summary = event.method ? \`\${event.method} \${event.path}\` : "timer tick";`,
      `    this.$emit({ event${count} }, { summary });`,
    );
  } else if (options.http) {
    body.push(`    this.$emit({ body: event.body, query: event.query${count} }, { summary: \`\${event.method} \${event.path}\` });`);
  } else if (options.timer) {
    body.push(`    this.$emit({ timestamp: event.timestamp${count} }, { summary: "timer tick" });`);
  } else {
    body.push(`    // No trigger: \`runnel run <name>\` runs it by hand.`, `    this.$emit({ event${count}, at: Date.now() }, { summary: "ran" });`);
  }
  return [
    "export default {",
    `  key: ${JSON.stringify(key)},`,
    `  name: ${JSON.stringify(name)},`,
    `  version: "0.0.1",`,
    `  type: "source",`,
    `  description: "What this source emits, and when.",`,
    props.length > 0 ? `  props: {\n${props.join("\n")}\n  },` : "  props: {},",
    "  async run(event) {",
    ...body,
    "  },",
    "};",
    "",
  ].join("\n");
}

export function actionTemplate(key: string, name: string): string {
  return [
    "export default {",
    `  key: ${JSON.stringify(key)},`,
    `  name: ${JSON.stringify(name)},`,
    `  version: "0.0.1",`,
    `  type: "action",`,
    `  description: "What this step does.",`,
    "  props: {",
    `    greeting: { type: "string", label: "Greeting", optional: true, default: "Hello" },`,
    "  },",
    "  async run({ $ }) {",
    `    $.export("$summary", "Said hello");`,
    "    // What is returned is available to later steps.",
    "    return { message: `${this.greeting}, world` };",
    "  },",
    "};",
    "",
  ].join("\n");
}

export function appTemplate(slug: string): string {
  return [
    "export default {",
    `  type: "app",`,
    `  app: ${JSON.stringify(slug)},`,
    "  // Props components can copy with propDefinition: [app, \"name\"].",
    "  propDefinitions: {},",
    "  // Called from components as this.<app prop>.<method>(); this.$auth holds the account's credentials.",
    "  methods: {},",
    "};",
    "",
  ].join("\n");
}
