/**
 * The runner: a child process that runs one component bundle's code for the
 * host, one call at a time. It starts with an empty environment, under Node's
 * permission model (and bubblewrap where available), and talks to the host
 * over the IPC channel only (protocol.ts). Anything user code prints is
 * captured into the current call's logs.
 *
 * This folder is the runner's whole world at run time: it may import types
 * from outside, but values only from here and from node: modules.
 */
import { dirname, sep } from "node:path";
import type { HostMessage, RunnerMessage } from "../protocol.js";
import type { SandboxError } from "../sandbox-error.js";
import { ActiveCall } from "./active-call.js";
import { installCapture } from "./capture.js";
import { InvalidComponentError, installDefineGlobals, loadComponent, type Component } from "./component.js";
import { describeThrown, trimStack } from "./describe-thrown.js";
import { dispatch } from "./dispatch.js";

// Stack frames from this folder are the runner's, not the component's.
const runnerFile = `${dirname(process.argv[1] ?? "")}${sep}`;

// Bound now, so that user code replacing process.send or process.exit cannot cut the runner off.
const channelSend = process.send?.bind(process);
// process.exit() ends in process.reallyExit(), which is replaced below; this is the original.
const reallyExit = (process as unknown as { reallyExit: (code: number) => never }).reallyExit.bind(process);
const realExit = (code: number): never => reallyExit(code);

function send(message: RunnerMessage): void {
  try {
    channelSend?.(message);
  } catch {
    // The channel is gone (the host is closing): nothing is waiting for the message.
  }
}

type Loaded = { component: Component } | { error: SandboxError };

let bundleFile: string | undefined;
let loaded: Loaded | undefined;
let current: ActiveCall | undefined;

function describeFailure(thrown: unknown): SandboxError {
  if (thrown instanceof InvalidComponentError) {
    const error: SandboxError = { code: "InvalidComponent", name: "InvalidComponent", message: thrown.message };
    const stack = trimStack(thrown.stack, runnerFile);
    if (stack) error.stack = stack;
    return error;
  }
  return describeThrown(thrown, { runnerFile });
}

function load(): Loaded {
  if (loaded) return loaded;
  if (!bundleFile) return { error: { code: "InvalidComponent", name: "InvalidComponent", message: "No component bundle was loaded." } };
  try {
    loaded = { component: loadComponent(bundleFile) };
  } catch (thrown) {
    // Kept: requiring again would run the module's top-level code again.
    loaded = { error: describeFailure(thrown) };
  }
  return loaded;
}

async function invoke(message: Extract<HostMessage, { type: "invoke" }>): Promise<void> {
  const call = new ActiveCall({ id: message.id, db: message.db, maxLogBytes: message.maxLogBytes, maxLogEntries: message.maxLogEntries, send });
  current = call;
  try {
    const target = load();
    if ("error" in target) {
      call.fail(target.error, false);
      return;
    }
    const value = await dispatch(target.component, message.call, {
      props: message.props,
      dbProps: message.dbProps,
      db: call.db,
      emit: (event, meta) => call.emit(event, meta),
      respond: (response) => call.respond(response),
    });
    // One turn of the event loop, so that a promise the call left rejected is reported as this call's failure.
    await new Promise((resolve) => setImmediate(resolve));
    call.succeed(value);
  } catch (thrown) {
    await new Promise((resolve) => setImmediate(resolve));
    call.fail(describeFailure(thrown), false);
  }
}

/** An exception or rejection outside the call's own promise: the call fails, and the runner asks to be replaced. */
function fault(error: SandboxError): void {
  if (current && !current.ended) current.fail(error, true);
  else send({ type: "error", id: null, error, db: null, retire: true });
}

function exitIntercepted(code?: number | string | null): never {
  const exitCode = Number(code ?? process.exitCode ?? 0) || 0;
  fault({
    code: "ProcessExit",
    name: "ProcessExit",
    message: `The component called process.exit(${exitCode}). A component ends by returning or throwing; it must not end the process.`,
  });
  // The IPC write above is attempted synchronously, so the host has it before it sees the exit.
  return realExit(exitCode);
}

function start(): void {
  for (const name of Object.keys(process.env)) delete process.env[name];
  installDefineGlobals();
  installCapture((stream, text) => current?.log(stream, text));
  process.exit = exitIntercepted;
  (process as unknown as { reallyExit: (code?: number) => never }).reallyExit = exitIntercepted;
  process.on("uncaughtException", (thrown) => fault(describeThrown(thrown, { runnerFile })));
  process.on("unhandledRejection", (reason) =>
    fault(describeThrown(reason, { runnerFile, code: "UnhandledRejection", prefix: "Unhandled promise rejection: " })),
  );
  // Without the host there is nobody to answer to.
  process.on("disconnect", () => realExit(0));
  process.on("message", (message: HostMessage) => {
    if (message.type === "load") bundleFile = message.file;
    else if (message.type === "invoke") void invoke(message);
  });
}

start();
