/**
 * The runner's entry: a child process that runs the code of one owner's
 * component bundles for the host, keeping them loaded between calls. It starts with an empty environment,
 * under Node's permission model (and bubblewrap where available), and talks
 * to the host over framed messages on descriptor 3 only (channel.ts). Anything user code
 * prints is captured into the current call's logs.
 *
 * This folder is the runner's whole world at run time: it may import types
 * from outside, but values only from here and from node: modules.
 */
import { createRequire } from "node:module";
import { dirname, sep } from "node:path";
import type { ChainStep, HostMessage, RunnerMessage, WireResponse } from "../protocol.js";
import { installCapture } from "./capture.js";
import { installDefineGlobals } from "./component.js";
import { installNetworkShim } from "./network-shim.js";
import { egressSocketFromArgs, maxBundlesFromArgs } from "./runner-args.js";
import { openChannel } from "./channel.js";
import { clearEnvironment, Runner, type InvokeMessage } from "./runner.js";

function start(): void {
  // process.exit() ends in process.reallyExit(), which is replaced below; this is the original.
  const reallyExit = (process as unknown as { reallyExit: (code: number) => never }).reallyExit.bind(process);

  const runner = new Runner({
    send: (message: RunnerMessage<WireResponse>) => channel.send(message),
    post: (message: RunnerMessage<WireResponse>) => channel.post(message),
    keep: (message: RunnerMessage<WireResponse>) => channel.keep(message),
    secured: () => channel.secured(),
    runnerPath: `${dirname(process.argv[1] ?? "")}${sep}`,
    maxLoaded: maxBundlesFromArgs(process.argv),
  });
  const receive = (message: HostMessage): void => {
    if (message.type === "invoke") runner.enqueue(message);
    else if (message.type === "stop-chain") runner.stopChain(message.id);
    else if (message.type === "store-reply") {
      const { id, req, type: _type, ...answer } = message;
      runner.storeReply(id, req, answer);
    }
    else if (message.type === "invoke-many") {
      const { props, dbProps, bundle, lane, steps } = message.shared;
      // Completed in place: each invoke was parsed from this message, and nothing else holds it.
      for (const invoke of message.invokes as Array<(typeof message.invokes)[number] & Partial<Pick<InvokeMessage, "bundle" | "lane">>>) {
        if (invoke.call.kind === "steps" && invoke.call.steps === undefined) (invoke.call as { steps?: ChainStep[] }).steps = steps ?? [];
        invoke.props ??= props;
        invoke.dbProps ??= dbProps;
        invoke.bundle = bundle;
        invoke.lane = lane;
        runner.enqueue(invoke as InvokeMessage);
      }
    }
  };
  // Opened before user code runs; without the host (or with a host that sends what is not a frame) there is nobody to answer to.
  const channel = openChannel({ onMessage: (message) => receive(message as HostMessage), onLost: () => reallyExit(0) });

  const exitIntercepted = (code?: number | string | null): never => {
    const exitCode = Number(code ?? process.exitCode ?? 0) || 0;
    runner.fault({
      code: "ProcessExit",
      name: "ProcessExit",
      message: `The component called process.exit(${exitCode}). A component ends by returning or throwing; it must not end the process.`,
    });
    // The channel writes the fault straight to its descriptor (channel.ts), so the host has it before it sees the exit.
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

  // Nor does it cover the inspector of another process (SIGUSR1 through process._debugProcess, which skips _kill) or
  // scheduling priorities: without bubblewrap's pid namespace these would reach the server itself.
  (process as unknown as { _debugProcess: (pid: number) => never })._debugProcess = () => {
    throw Object.assign(new Error("process._debugProcess() is not allowed in a component."), { code: "ERR_ACCESS_DENIED" });
  };
  guardPriorities();

  // Empty already when spawned; bubblewrap adds PWD.
  clearEnvironment();
  installDefineGlobals();
  const egressSocket = egressSocketFromArgs(process.argv);
  if (egressSocket) installNetworkShim(egressSocket);
  installCapture((stream, text) => runner.log(stream, text));
  process.exit = exitIntercepted;
  (process as unknown as { reallyExit: typeof exitIntercepted }).reallyExit = exitIntercepted;
  process.on("uncaughtException", (thrown) => runner.fault(runner.describe(thrown)));
  process.on("unhandledRejection", (reason) => runner.fault(runner.describe(reason, { code: "UnhandledRejection", prefix: "Unhandled promise rejection: " })));
  // Still before any user code: what the host sent meanwhile is read only once this returns.
  channel.send({ type: "ready" });
}

/** os.setPriority may lower this process's own priority (nice it), nothing else. */
function guardPriorities(): void {
  const os = createRequire("/")("node:os") as typeof import("node:os");
  const setPriority = os.setPriority.bind(os);
  const denied = (what: string) => Object.assign(new Error(`os.setPriority(): ${what}.`), { code: "ERR_ACCESS_DENIED" });
  os.setPriority = ((pidOrPriority: number, priority?: number): void => {
    const [pid, wanted] = priority === undefined ? [0, pidOrPriority] : [pidOrPriority, priority];
    if (pid !== 0 && pid !== process.pid) throw denied("a component may change only its own process's priority");
    if (typeof wanted === "number" && wanted < os.getPriority(0)) throw denied("a component may lower its priority, not raise it");
    setPriority(pid, wanted);
  }) as typeof os.setPriority;
}

start();
