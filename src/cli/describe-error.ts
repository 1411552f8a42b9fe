import { ApiError } from "../client/api-client.js";

/** One line for a failure: the server's stable error name when it has one, then what went wrong. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `Error (${error.code}): ${error.message}`;
  if (error instanceof Error) return `Error: ${error.message}`;
  return `Error: ${String(error)}`;
}
