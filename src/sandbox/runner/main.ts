/**
 * The runner's entry: a child process that runs one component bundle's code
 * for the host, one call at a time. It starts with an empty environment,
 * under Node's permission model (and bubblewrap where available), and talks
 * to the host over the IPC channel only (protocol.ts). Anything user code
 * prints is captured into the current call's logs.
 *
 * This folder is the runner's whole world at run time: it may import types
 * from outside, but values only from here and from node: modules.
 */
import { dirname, sep } from "node:path";
import type { HostMessage, RunnerMessage, WireResponse } from "../protocol.js";
import { installCapture } from "./capture.js";
import { installDefineGlobals } from "./component.js";
import { installNetworkShim } from "./network-shim.js";
import { egressSocketFromArgs } from "./runner-args.js";
import { Runner } from "./runner.js";

function start(): void {
  // Bound before user code runs, so that replacing process.send or process.exit cannot cut the runner off.
  const channelSend = process.send?.bind(process);
  // process.exit() ends in process.reallyExit(), which is replaced below; this is the original.
  const reallyExit = (process as unknown as { reallyExit: (code: number) => never }).reallyExit.bind(process);

  const send = (message: RunnerMessage<WireResponse>): void => {
    try {
      channelSend?.(message);
    } catch {
      // The channel is gone (the host is closing): nothing is waiting for the message.
    }
  };
  const runner = new Runner({ send, runnerPath: `${dirname(process.argv[1] ?? "")}${sep}` });

  const exitIntercepted = (code?: number | string | null): never => {
    const exitCode = Number(code ?? process.exitCode ?? 0) || 0;
    runner.fault({
      code: "ProcessExit",
      name: "ProcessExit",
      message: `The component called process.exit(${exitCode}). A component ends by returning or throwing; it must not end the process.`,
    });
    // The IPC write above is attempted synchronously, so the host has it before it sees the exit.
    return reallyExit(exitCode);
  };

  // The permission model does not cover signals, and without bubblewrap the runner shares the server's
  // user and pid namespace: process.kill() goes through process._kill(), which may signal only this process.
  const internals = process as unknown as { _kill: (pid: number, signal: number) => unknown };
  const rawKill = internals._kill.bind(process);
  internals._kill = (pid: number, signal: number) => {
    if (pid !== process.pid) throw Object.assign(new Error("process.kill() may signal only the component's own process."), { code: "ERR_ACCESS_DENIED" });
    return rawKill(pid, signal);
  };

  // Empty already when spawned; bubblewrap adds PWD.
  for (const name of Object.keys(process.env)) delete process.env[name];
  installDefineGlobals();
  const egressSocket = egressSocketFromArgs(process.argv);
  if (egressSocket) installNetworkShim(egressSocket);
  installCapture((stream, text) => runner.log(stream, text));
  process.exit = exitIntercepted;
  (process as unknown as { reallyExit: typeof exitIntercepted }).reallyExit = exitIntercepted;
  process.on("uncaughtException", (thrown) => runner.fault(runner.describe(thrown)));
  process.on("unhandledRejection", (reason) => runner.fault(runner.describe(reason, { code: "UnhandledRejection", prefix: "Unhandled promise rejection: " })));
  // Without the host there is nobody to answer to.
  process.on("disconnect", () => reallyExit(0));
  process.on("message", (message: HostMessage) => {
    if (message.type === "load") runner.setBundle(message.file);
    else if (message.type === "invoke") runner.enqueue(message);
    else if (message.type === "invoke-many") {
      const { props, dbProps } = message.shared;
      for (const invoke of message.invokes) runner.enqueue({ ...invoke, props: invoke.props ?? props, dbProps: invoke.dbProps ?? dbProps });
    }
  });
}

start();
