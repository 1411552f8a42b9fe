import type { Command } from "commander";
import { globalOptions, type CommandContext } from "../command-context.js";
import { formatTime, printJson, printTable } from "../output.js";
import { openSession } from "../session.js";

/** A value as typed: JSON when it parses (`42`, `{"a":1}`, `"text"`), else the text itself. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

export function registerStores(program: Command, context: CommandContext): void {
  const stores = program.command("stores").description("List and edit your data stores (what data_store props name)");

  stores
    .command("list")
    .description("List your data stores with how many records each holds")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const page = await client.listDataStores();
      if (options.json) return printJson(context.io, page);
      if (page.data.length === 0) return void context.io.stderr.write("No data stores yet. A store is made by its first record: runnel stores set <store> <key> <value>.\n");
      printTable(context.io, ["name", "keys", "bytes", "updated"], page.data.map((store) => [store.name, String(store.key_count), String(store.bytes), formatTime(store.updated_at)]));
    });

  stores
    .command("get <store> [key]")
    .description("Print one record's value as JSON; without a key, list the store's records by key")
    .option("-n, --limit <count>", "records per page without a key (1 to 100)", "100")
    .option("--after <key>", "without a key: the records after this key")
    .option("--json", "print JSON")
    .action(async (name: string, key: string | undefined, options: { limit: string; after?: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      if (key !== undefined) {
        const record = await client.getDataStoreRecord(name, key);
        if (options.json) return printJson(context.io, record);
        return void context.io.stdout.write(`${JSON.stringify(record.value, null, 2)}\n`);
      }
      const page = await client.listDataStoreRecords(name, { limit: Number(options.limit), ...(options.after ? { after: options.after } : {}) });
      if (options.json) return printJson(context.io, page);
      printTable(context.io, ["key", "value", "expires"], page.data.map((record) => [record.key, preview(record.value), formatTime(record.expires_at)]));
      if (page.page_info.count < page.page_info.total_count && page.page_info.end_cursor) {
        context.io.stderr.write(`Showing ${page.page_info.count} of ${page.page_info.total_count} records; the next ones: runnel stores get ${name} --after ${JSON.stringify(page.page_info.end_cursor)}\n`);
      }
    });

  stores
    .command("set <store> <key> <value>")
    .description("Write a record (the value is JSON when it parses, else text); the store is made by its first record")
    .option("--ttl <seconds>", "the record expires after this many seconds")
    .option("--json", "print JSON")
    .action(async (name: string, key: string, value: string, options: { ttl?: string; json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const record = await client.setDataStoreRecord(name, key, parseValue(value), options.ttl === undefined ? undefined : Number(options.ttl));
      if (options.json) return printJson(context.io, record);
      const expires = record.expires_at === null ? "" : `, expires ${formatTime(record.expires_at)}`;
      context.io.stdout.write(`Set ${key} in ${name}${expires}.\n`);
    });

  stores
    .command("delete <store> [key]")
    .description("Delete one record; without a key, delete the whole store with its records")
    .action(async (name: string, key: string | undefined, _options: unknown, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      if (key !== undefined) {
        await client.deleteDataStoreRecord(name, key);
        return void context.io.stdout.write(`Deleted ${key} from ${name}.\n`);
      }
      await client.deleteDataStore(name);
      context.io.stdout.write(`Deleted the data store ${name} and its records.\n`);
    });
}
