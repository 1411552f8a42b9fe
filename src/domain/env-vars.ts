import { Buffer } from "node:buffer";
import { describeValue } from "./describe-value.js";
import { ValidationError } from "./errors.js";

/**
 * A user's environment variables: named values that workflow steps receive as
 * prop values (`{{process.env.NAME}}`), since code never reads the process's
 * environment (SEED "Authentication" 5). Secret ones are sealed at rest and
 * never shown again.
 */
export interface EnvVar {
  ownerId: string;
  name: string;
  /** The value, or its sealed form when `secret`. */
  value: string;
  secret: boolean;
  createdAt: number;
  updatedAt: number;
}

/** The usual rule for environment variable names. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const MAX_ENV_NAME_LENGTH = 128;
/** As a prop value may be (SEED "Limits"): a variable is passed as one. */
export const MAX_ENV_VALUE_BYTES = 64 * 1024;
/** Variables one user may keep. */
export const MAX_ENV_VARS_PER_USER = 500;

export function checkEnvName(name: string, field = "name"): string {
  if (!ENV_NAME.test(name) || name.length > MAX_ENV_NAME_LENGTH) {
    throw new ValidationError(
      field,
      `"${name.slice(0, MAX_ENV_NAME_LENGTH)}" is not a valid environment variable name: use letters, digits and _, not starting with a digit, at most ${MAX_ENV_NAME_LENGTH} characters (like API_TOKEN).`,
    );
  }
  return name;
}

/** The body of `PUT /v1/env/<NAME>`: `{ value, secret? }`. */
export function checkEnvInput(body: { value?: unknown; secret?: unknown }): { value: string; secret: boolean } {
  const { value, secret = false } = body;
  if (typeof value !== "string") throw new ValidationError("value", `value must be a string (environment variables are text); got ${describeValue(value)}.`);
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > MAX_ENV_VALUE_BYTES) {
    throw new ValidationError("value", `value is ${Math.ceil(bytes / 1024)} KB; an environment variable may be at most ${MAX_ENV_VALUE_BYTES / 1024} KB. Store large data elsewhere and pass a reference.`);
  }
  if (typeof secret !== "boolean") throw new ValidationError("secret", `secret must be true or false; got ${describeValue(secret)}.`);
  return { value, secret };
}
