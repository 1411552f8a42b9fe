/**
 * How a failed call is reported. The same shape travels from the runner over
 * the wire and out of the sandbox, so it holds only plain data.
 */

export type SandboxErrorCode =
  /** The component threw (or rejected with) an Error; name, message and stack are its own. */
  | "UserError"
  /** The component threw something that is not an Error (a string, an object). */
  | "NonErrorThrown"
  | "Timeout"
  /** The call's run was cancelled and its step did not stop, so its runner was stopped. */
  | "Cancelled"
  | "OutOfMemory"
  /** User code called process.exit(). */
  | "ProcessExit"
  | "UnhandledRejection"
  /** The call printed more than its log limit. */
  | "OutputFlood"
  /** The runner process died for a reason that has no better name. */
  | "RunnerCrashed"
  /** The module did not load, or did not export a component of the expected shape. */
  | "InvalidComponent"
  /** A workflow step's props could not be evaluated (an expression). */
  | "ConfigurationError"
  /** An app prop's connected account cannot be used (revoked, deleted): the host said so, the runner failed the call before user code ran. */
  | "AuthError";

export interface SandboxError {
  code: SandboxErrorCode;
  name: string;
  message: string;
  stack?: string;
  /** What the thrown error said of retrying its step (`error.retryable = false`), when it said anything (docs/workflows.md, "Retries"). */
  retryable?: boolean;
}

export function sandboxError(code: SandboxErrorCode, message: string): SandboxError {
  return { code, name: code, message };
}
