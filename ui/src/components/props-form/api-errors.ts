import { ApiError } from "../../api/client";
import type { ConfigurableProp, PropErrors } from "./types";

/**
 * The API's validation error placed at the prop it names: the API names the
 * offending input as `details.field` (like `configured_props.channel`, or
 * `steps[1].props.url` for a workflow step), so `prefix` is where this form's
 * values sit in the request. Null when the error names none of these props:
 * show it above the form instead.
 */
export function errorsFromApi(error: unknown, props: ConfigurableProp[], prefix = "configured_props"): PropErrors | null {
  if (!(error instanceof ApiError) || error.field === null) return null;
  for (const prop of props) {
    const field = `${prefix}.${prop.name}`;
    if (error.field === field || error.field.startsWith(`${field}.`) || error.field.startsWith(`${field}[`)) return { [prop.name]: error.message };
  }
  return null;
}
