/** Turns whatever user code threw into a SandboxError. */
import { inspect } from "node:util";
import type { SandboxError, SandboxErrorCode } from "../sandbox-error.js";
import { AccountAuthError } from "./instance.js";

const PREVIEW_CHARS = 500;

function preview(value: unknown): string {
  const text = inspect(value, { depth: 2, breakLength: Infinity, maxStringLength: PREVIEW_CHARS });
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** Duck-typed as well, because an Error made in another realm fails instanceof. */
function isErrorLike(value: unknown): value is Error {
  if (value instanceof Error) return true;
  if (typeof value !== "object" || value === null) return false;
  const { name, message, stack } = value as Record<string, unknown>;
  return typeof name === "string" && typeof message === "string" && typeof stack === "string";
}

/**
 * Stack frames of the runner itself say nothing to the component's author;
 * `runnerFile` is this runner's entry, whose frames are dropped.
 */
export function trimStack(stack: string | undefined, runnerFile: string): string | undefined {
  if (stack === undefined) return undefined;
  return stack
    .split("\n")
    .filter((line) => !(line.trimStart().startsWith("at ") && line.includes(runnerFile)))
    .join("\n");
}

export interface DescribeOptions {
  runnerFile: string;
  /** The code for an Error; UnhandledRejection keeps its own code for non-Errors too. */
  code?: SandboxErrorCode;
  /** Put before the message ("Unhandled promise rejection: …"). */
  prefix?: string;
}

export function describeThrown(thrown: unknown, options: DescribeOptions): SandboxError {
  const prefix = options.prefix ?? "";
  if (isErrorLike(thrown)) {
    const code = thrown instanceof AccountAuthError ? "AuthError" : (options.code ?? "UserError");
    const error: SandboxError = { code, name: String(thrown.name), message: `${prefix}${String(thrown.message)}` };
    const stack = trimStack(typeof thrown.stack === "string" ? thrown.stack : undefined, options.runnerFile);
    if (stack !== undefined) error.stack = stack;
    const retryable = (thrown as { retryable?: unknown }).retryable;
    if (typeof retryable === "boolean") error.retryable = retryable;
    return error;
  }
  if (options.code) return { code: options.code, name: options.code, message: `${prefix}${preview(thrown)} (${kindOf(thrown)}, not an Error)` };
  return { code: "NonErrorThrown", name: "NonErrorThrown", message: `The component threw ${kindOf(thrown)} instead of an Error: ${preview(thrown)}` };
}
