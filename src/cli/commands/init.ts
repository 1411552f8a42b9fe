import type { Command } from "commander";
import { mkdir, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { slugify } from "../../domain/slug.js";
import type { CommandContext } from "../command-context.js";
import { printJson } from "../output.js";
import { actionTemplate, appTemplate, sourceTemplate, type SourceTemplateOptions } from "../templates.js";

export function registerInit(program: Command, context: CommandContext): void {
  const init = program.command("init").description("Start a new component: writes <name>/<name>.mjs in this folder");

  init
    .command("source <name>")
    .description("Start a source: an HTTP source unless --timer or --manual says otherwise")
    .option("--http", "an HTTP endpoint ($.interface.http): the default; with --timer, both")
    .option("--timer", "a timer ($.interface.timer, every 15 minutes) instead of the endpoint")
    .option("--manual", "no trigger: it runs by hand (runnel run)")
    .option("--db", "add a key-value store ($.service.db)")
    .option("--json", "print JSON")
    .action(async (name: string, options: SourceTemplateOptions & { manual?: boolean; json?: boolean }) => {
      if (options.manual && (options.http || options.timer)) throw new Error("--manual is a source without a trigger: leave out --http and --timer, or --manual.");
      const slug = slugify(name);
      // Most sources are webhooks: an endpoint unless a timer or no trigger was asked for.
      const http = Boolean(options.http) || (!options.timer && !options.manual);
      await writeNew(context, join(slug, `${slug}.mjs`), sourceTemplate(slug, name, { ...options, http }), "source", Boolean(options.json));
    });

  init
    .command("action <name>")
    .description("Start an action (a workflow step)")
    .option("--json", "print JSON")
    .action(async (name: string, options: { json?: boolean }) => {
      const slug = slugify(name);
      await writeNew(context, join(slug, `${slug}.mjs`), actionTemplate(slug, name), "action", Boolean(options.json));
    });

  init
    .command("app <name>")
    .description("Start an app file that components import (props and methods shared by them)")
    .option("--json", "print JSON")
    .action(async (name: string, options: { json?: boolean }) => {
      const slug = slugify(name);
      await writeNew(context, join(slug, `${slug}.app.mjs`), appTemplate(slug), "app", Boolean(options.json));
    });
}

/** Writes the file only when there is none: a template never replaces someone's work. */
async function writeNew(context: CommandContext, path: string, text: string, kind: string, json: boolean): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  try {
    await writeFile(path, text, { flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") throw new Error(`${path} exists already; nothing was written. Pick another name, or move it away.`);
    throw error;
  }
  const shown = relative(process.cwd(), path) || path;
  if (json) return printJson(context.io, { kind, path: shown });
  context.io.stdout.write(`Wrote ${shown}.\n`);
  if (kind === "source") context.io.stderr.write(`Deploy it with \`runnel deploy ${shown}\`, or work on it with \`runnel dev ${shown}\`.\n`);
}
