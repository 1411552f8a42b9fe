/**
 * Domain errors: one class per failure kind, each with a stable `code`.
 * The API maps codes to HTTP statuses in one place (api/error-mapping.ts);
 * errors that cross process boundaries travel as {code, message, details}.
 */

export type ErrorCode =
  | "ValidationError"
  | "HookFailed"
  | "SourceFailed"
  | "MalformedBody"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "Conflict"
  | "PayloadTooLarge"
  | "UnsupportedMediaType"
  | "RateLimited"
  | "Unavailable"
  | "RegistryUnavailable"
  | "AuthError"
  | "InternalError";

export type ErrorDetails = Record<string, unknown>;

export class RunnelError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetails) {
    super(message);
    this.name = code;
    this.code = code;
    this.details = details;
  }
}

/** Bad input; `field` names what is wrong, as a dotted path (`configured_props.url`). */
export class ValidationError extends RunnelError {
  readonly field: string;
  constructor(field: string, message: string, details?: ErrorDetails) {
    super("ValidationError", message, { field, ...details });
    this.field = field;
  }
}

/** A component's hook threw: the operation that ran it did not happen. */
export class HookFailedError extends RunnelError {
  constructor(hook: string, message: string, details?: ErrorDetails) {
    super("HookFailed", `The ${hook} hook failed, so nothing was changed: ${message}`, { hook, ...details });
  }
}

/** A source's run failed while a caller waited for it (an HTTP request, a manual run). */
export class SourceFailedError extends RunnelError {
  constructor(message: string, details?: ErrorDetails) {
    super("SourceFailed", message, details);
  }
}

export class MalformedBodyError extends RunnelError {
  constructor(message: string, details?: ErrorDetails) {
    super("MalformedBody", message, details);
  }
}

export class UnauthorizedError extends RunnelError {
  constructor(message: string) {
    super("Unauthorized", message);
  }
}

export class ForbiddenError extends RunnelError {
  constructor(message: string) {
    super("Forbidden", message);
  }
}

/**
 * Not found, or not the caller's: the two must look the same so that no user can
 * learn that another user's resource exists.
 */
export class NotFoundError extends RunnelError {
  constructor(kind: string, id: string, by: "id" | "id or name" = "id") {
    super("NotFound", `No ${kind} with ${by} "${id}" was found.`, { kind, id });
  }
}

export class ConflictError extends RunnelError {
  constructor(message: string, details?: ErrorDetails) {
    super("Conflict", message, details);
  }
}

export class PayloadTooLargeError extends RunnelError {
  constructor(message: string, details?: ErrorDetails) {
    super("PayloadTooLarge", message, details);
  }
}

export class RateLimitedError extends RunnelError {
  constructor(message: string, details?: ErrorDetails) {
    super("RateLimited", message, details);
  }
}

export class UnavailableError extends RunnelError {
  /** `retryAfterSeconds`: sent as Retry-After, for a caller to come back when the server has room again. */
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super("Unavailable", message);
  }
}

/** The package registry could not be reached (or answered nonsense) while resolving a component's imports. */
export class RegistryUnavailableError extends RunnelError {
  constructor(message: string, details?: ErrorDetails) {
    super("RegistryUnavailable", message, details);
  }
}

/**
 * A connected account cannot be used: the provider refused its refresh (the
 * grant was revoked), or it is marked as needing reconnection. Runs that need
 * it fail with this, naming the app and the account.
 */
export class AuthError extends RunnelError {
  constructor(message: string, details?: ErrorDetails) {
    super("AuthError", message, details);
  }
}

export function isRunnelError(value: unknown): value is RunnelError {
  return value instanceof RunnelError;
}
