import { ApiError } from "../../api/client";
import { DraftError } from "./draft";

/** Why a save failed, and the form field it names (the API's `details.field`, or the form's own check). */
export interface Problem {
  field: string | null;
  message: string;
}

export function problemOf(error: unknown): Problem | null {
  if (!error) return null;
  if (error instanceof DraftError) return { field: error.field, message: error.message };
  if (error instanceof ApiError) return { field: error.field, message: error.message };
  return { field: null, message: error instanceof Error ? error.message : String(error) };
}

/** The message for `field` when the problem names it or a field inside it (`steps[1].props` covers `steps[1].props.count`). */
export function messageAt(problem: Problem | null, field: string): string | null {
  if (!problem?.field) return null;
  const named = problem.field;
  return named === field || named.startsWith(`${field}.`) || named.startsWith(`${field}[`) ? problem.message : null;
}
