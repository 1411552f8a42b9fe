import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { formatTime, printJson, printTable } from "../output.js";
import { Prompter } from "../prompt.js";
import { openSession } from "../session.js";

/**
 * `runnel env set|list|unset`: your environment variables, which workflow
 * steps receive where a prop says `{{process.env.NAME}}`.
 */
export function registerEnv(program: Command, context: CommandContext): void {
  const env = program.command("env").description("Set, list and remove your environment variables (steps read them as {{process.env.NAME}} in props)");

  env
    .command("set <name> [value]")
    .description("Set a variable; without a value it is read from stdin (typed hidden with --secret), so that it stays out of your shell's history")
    .option("--secret", "store it sealed; its value is never shown again")
    .option("--json", "print JSON")
    .action(async (name: string, given: string | undefined, options: { secret?: boolean; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const value = given ?? (await readValue(context, name, options.secret === true));
      const set = await client.setEnvVar(name, value, options.secret === true);
      if (options.json) return printJson(context.io, set);
      context.io.stdout.write(`Set ${set.name}${set.secret ? " (secret: its value is not shown again)" : ""}. Steps read it as {{process.env.${set.name}}}.\n`);
    });

  env
    .command("list")
    .description("List your variables (secret ones without their value)")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listEnvVars();
      if (options.json) return printJson(context.io, page);
      if (page.data.length === 0) {
        context.io.stderr.write("You have no environment variables. Set one: runnel env set NAME value\n");
        return;
      }
      printTable(
        context.io,
        ["name", "value", "updated"],
        page.data.map((envVar) => [envVar.name, envVar.secret ? "(secret)" : envVar.value ?? "", formatTime(envVar.updated_at)]),
      );
    });

  env
    .command("unset <name>")
    .description("Remove a variable; steps that read it fail with a ConfigurationError naming it")
    .option("--json", "print JSON")
    .action(async (name: string, options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      await client.unsetEnvVar(name);
      if (options.json) return printJson(context.io, { name, removed: true });
      context.io.stdout.write(`Removed ${name}.\n`);
    });
}

/** The value, asked for on a terminal (hidden for a secret), or all of what is piped in, without its final newline. */
async function readValue(context: CommandContext, name: string, secret: boolean): Promise<string> {
  const { stdin } = context.io;
  if (stdin.isTTY) {
    const prompter = new Prompter(stdin, context.io.stderr);
    try {
      return await prompter.ask(`Value of ${name}`, { hidden: secret });
    } finally {
      prompter.done();
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
}
