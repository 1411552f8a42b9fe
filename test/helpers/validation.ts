import { ValidationError } from "../../src/domain/errors.js";

/** The field a ValidationError names; fails when `run` throws anything else or nothing. */
export function validationFieldOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.field;
    throw error;
  }
  throw new Error("expected a ValidationError");
}
