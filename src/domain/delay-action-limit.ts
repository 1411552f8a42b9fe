import { ValidationError } from "./errors.js";
import { MAX_FLOW_DELAY_MS } from "./run-flow.js";

/** The catalog's Delay action (catalog/helper_functions/actions/delay): its key and its units, as it reads them. */
export const DELAY_ACTION_KEY = "helper_functions-delay";
const UNIT_MS: Record<string, number> = { milliseconds: 1, seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/**
 * A Delay step longer than a run may wait is refused when the workflow is
 * saved, not days later when a run reaches it: its limit depends on two props
 * together (duration and unit), which no prop rule of the component can say.
 * Values given by `{{ }}` expressions are known only at run time, where the
 * action refuses them itself.
 */
export function checkDelayStep(key: string | null, props: Record<string, unknown>, place: { field: string; step: string }): void {
  if (key !== DELAY_ACTION_KEY) return;
  const duration = props.duration;
  const unit = props.unit ?? "seconds";
  if (typeof duration !== "number" || typeof unit !== "string" || !Object.hasOwn(UNIT_MS, unit)) return;
  if (duration * UNIT_MS[unit]! <= MAX_FLOW_DELAY_MS) return;
  throw new ValidationError(
    `${place.field}.duration`,
    `Step "${place.step}": a delay of ${duration} ${unit} is longer than the 7 days a run may wait. Give 7 days or less (${MAX_FLOW_DELAY_MS / UNIT_MS[unit]!} ${unit}).`,
  );
}
