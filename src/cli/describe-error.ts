import { ApiError } from "../client/api-client.js";
import { withoutErrorPrefix } from "../domain/error-text.js";

/** One line for a failure: the server's stable error name when it has one, then what went wrong; never "Error: Error: …". */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `Error (${error.code}): ${withoutErrorPrefix(error.message)}`;
  if (error instanceof Error) return `Error: ${withoutErrorPrefix(error.message)}`;
  return `Error: ${withoutErrorPrefix(String(error))}`;
}
