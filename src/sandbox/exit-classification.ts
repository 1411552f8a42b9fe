/** Why a runner died during a call, named for the component's author. */
import { JOIN_FAILED_EXIT } from "./resources/resource-limiter.js";
import type { SandboxError } from "./sandbox-error.js";

/** Why the host itself stopped a runner, when it did. */
export type StopReason = "timeout" | "start" | "flood" | "protocol" | "retire" | "evict" | "idle" | "close" | "cancel";

export interface RunnerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last few KB the process wrote to stderr outside the runner's capture (V8's fatal errors land here). */
  stderrTail: string;
  stoppedBy: StopReason | undefined;
  spawnError: Error | undefined;
  timeoutMs: number;
  /** How long it had to start (RUNNER_START_LIMIT_MS unless the host set another). */
  startLimitMs: number;
  memoryMb: number;
  /** What the runner sent that was not a message, when it broke the wire protocol. */
  violation?: string | undefined;
  /** The kernel killed it for passing the memory limit of its cgroup. */
  memoryKilled?: boolean;
  /** That limit, heap and everything else together, in MB. */
  wholeLimitMb?: number | undefined;
  /** The limit is RLIMIT_AS (see RunnerResources.addressSpaceLimited). */
  addressSpaceLimited?: boolean | undefined;
}

const OUT_OF_MEMORY = /heap out of memory|Reached heap limit|Allocation failed - JavaScript heap|Fatal JavaScript out of memory/i;
/** What a process says when native code could not allocate (or asserted on a failed allocation). */
const NATIVE_ALLOCATION_FAILED = /std::bad_alloc|Cannot allocate memory|Assertion failed/i;
const DETAIL_CHARS = 1000;

function lastLines(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > DETAIL_CHARS ? `…${trimmed.slice(-DETAIL_CHARS)}` : trimmed;
}

export function classifyExit(exit: RunnerExit): SandboxError {
  // A runner that had already reached its memory limit (V8's fatal error is in its stderr, or the kernel's OOM
  // killer took it) when the host's timer fired died of its memory: V8 takes tens to hundreds of ms to print its
  // report and abort, and on a loaded machine the timer often fires meanwhile. Memory is what its author must fix.
  if (exit.stoppedBy === "timeout" && !exit.memoryKilled && !OUT_OF_MEMORY.test(exit.stderrTail)) {
    return { code: "Timeout", name: "Timeout", message: `The call did not finish within its time limit of ${exit.timeoutMs} ms; the runner was stopped.` };
  }
  if (exit.stoppedBy === "start") {
    return {
      code: "RunnerCrashed",
      name: "RunnerCrashed",
      message: `The runner did not start within ${exit.startLimitMs / 1000} s, so the call's code never ran: the server is overloaded, or its sandbox cannot start (the server's log says more). Try again later.`,
    };
  }
  if (exit.stoppedBy === "cancel") {
    return { code: "Cancelled", name: "Cancelled", message: "The run was cancelled while this step ran, and the step did not stop where it awaits; the runner was stopped." };
  }
  if (exit.stoppedBy === "protocol") {
    return {
      code: "RunnerCrashed",
      name: "RunnerCrashed",
      message: `The runner was stopped because its channel to the server carried something that is not a message (${exit.violation ?? "unknown"}). The component's code wrote to, or closed, descriptor 3, which the runner uses to talk to the server; do not touch file descriptors your code did not open.`,
    };
  }
  if (exit.memoryKilled) {
    return {
      code: "OutOfMemory",
      name: "OutOfMemory",
      message: `The runner used more than its memory limit of ${exit.wholeLimitMb ?? exit.memoryMb} MB (heap, Buffers and native memory together; the heap alone may use ${exit.memoryMb} MB); it was stopped.`,
    };
  }
  if (exit.code === JOIN_FAILED_EXIT && !exit.stoppedBy) {
    return { code: "RunnerCrashed", name: "RunnerCrashed", message: "The runner could not be put under its resource limits (its cgroups could not be joined), so it was not started. The server's log says more." };
  }
  if (OUT_OF_MEMORY.test(exit.stderrTail)) {
    return { code: "OutOfMemory", name: "OutOfMemory", message: `The component ran out of memory (heap limit ${exit.memoryMb} MB); the runner was stopped.` };
  }
  // Under RLIMIT_AS a failed native allocation aborts where it happens (Node 24 asserts while loading
  // certificates, say): the address space is by far the likeliest cause, and the author's to act on.
  if (exit.addressSpaceLimited && !exit.stoppedBy && (exit.signal === "SIGABRT" || NATIVE_ALLOCATION_FAILED.test(exit.stderrTail))) {
    return {
      code: "OutOfMemory",
      name: "OutOfMemory",
      message: `The runner most likely reached its memory limit of ${exit.wholeLimitMb ?? exit.memoryMb} MB (heap, Buffers and native memory together): a native allocation failed and the process aborted. Hold less in memory at once.${exit.stderrTail.trim() ? ` Its last output: ${lastLines(exit.stderrTail)}` : ""}`,
    };
  }
  if (exit.stoppedBy === "flood") {
    return { code: "OutputFlood", name: "OutputFlood", message: "The component wrote more than its output limit; the runner was stopped." };
  }
  if (exit.stoppedBy === "close") {
    return { code: "RunnerCrashed", name: "RunnerCrashed", message: "The sandbox was closed during the call." };
  }
  if (exit.spawnError) {
    return { code: "RunnerCrashed", name: "RunnerCrashed", message: `The runner process could not start: ${exit.spawnError.message}` };
  }
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${String(exit.code)}`;
  const detail = lastLines(exit.stderrTail);
  return {
    code: "RunnerCrashed",
    name: "RunnerCrashed",
    message: `The runner process ${how} during the call.${detail ? ` Its last output: ${detail}` : ""}`,
  };
}
