import type { Command } from "commander";
import type { ProcessView, StatusView } from "../../api/schemas/status.js";
import { globalOptions, type CommandContext } from "../command-context.js";
import { printJson, printTable } from "../output.js";
import { openSession } from "../session.js";

/** `runnel status`: the processes of the installation and the queue, for an admin in a hurry. */
export function registerStatus(program: Command, context: CommandContext): void {
  program
    .command("status")
    .description("Show the processes of the installation (role, version, heartbeat, load) and the delivery queue (admins)")
    .option("--json", "print JSON")
    .action(async (options: { json?: boolean }, command: Command) => {
      const { client } = await openSession(context.env, globalOptions(command).profile);
      const status = await client.status();
      if (options.json) return printJson(context.io, status);
      printStatus(context, status);
    });
}

function printStatus(context: CommandContext, status: StatusView): void {
  const { io } = context;
  if (status.processes.length === 0) io.stderr.write("No process is recorded (servers older than this release do not record themselves).\n");
  else {
    printTable(
      io,
      ["process", "role", "state", "version", "host", "pid", "heartbeat", "up", "busy runners", "queued"],
      status.processes.map((process) => [
        `${process.instance_id.slice(0, 8)}${process.self ? " (this)" : ""}`,
        process.role,
        process.state === "lost" ? "LOST" : "live",
        process.version,
        process.host,
        String(process.pid),
        `${formatAge(process.heartbeat_age_ms)} ago`,
        formatAge(Date.now() - process.started_at * 1000),
        String(process.load.busy_runners),
        String(process.load.queued_deliveries),
      ]),
    );
  }
  const { waiting, running, oldest_wait_ms: oldest } = status.queues.deliveries;
  io.stdout.write(`deliveries: ${waiting} waiting, ${running} running${waiting > 0 ? `, oldest waiting ${formatAge(oldest)}` : ""}\n`);
  const lost = status.processes.filter((process) => process.state === "lost");
  if (lost.length > 0) io.stderr.write(`${describeLost(lost)}\n`);
}

/** What a lost process means and what to do, once for all of them. */
function describeLost(lost: ProcessView[]): string {
  const names = lost.map((process) => `${process.instance_id.slice(0, 8)} on ${process.host} (pid ${process.pid})`).join(", ");
  return `Lost: ${names}: no heartbeat for over six intervals. It was killed, froze or lost the database. Check that machine; a process started again on the same data folder takes its row back.`;
}

/** 850 ms, 12 s, 4 min, 3 h, 2 d. */
function formatAge(ms: number): string {
  const value = Math.max(0, ms);
  if (value < 1_000) return `${Math.round(value)} ms`;
  if (value < 60_000) return `${Math.round(value / 1_000)} s`;
  if (value < 3_600_000) return `${Math.round(value / 60_000)} min`;
  if (value < 86_400_000) return `${Math.round(value / 3_600_000)} h`;
  return `${Math.round(value / 86_400_000)} d`;
}
