import type { FastifyError } from "fastify";
import { isRunnelError, type ErrorCode, type ErrorDetails } from "../domain/errors.js";

/** The one place where error codes become HTTP statuses. */
export const HTTP_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = {
  ValidationError: 400,
  HookFailed: 400,
  SourceFailed: 502,
  MalformedBody: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  PayloadTooLarge: 413,
  UnsupportedMediaType: 415,
  RateLimited: 429,
  InternalError: 500,
  Unavailable: 503,
  RegistryUnavailable: 502,
  /** A connected account the provider no longer accepts: reconnect it. */
  AuthError: 409,
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
}

export interface HttpError {
  status: number;
  body: ErrorBody;
  /** Whether this is a bug to log loudly, rather than a caller's mistake. */
  unexpected: boolean;
}

function httpError(code: ErrorCode, message: string, details?: ErrorDetails): HttpError {
  const status = HTTP_STATUS_BY_CODE[code];
  return { status, body: { error: details ? { code, message, details } : { code, message } }, unexpected: status >= 500 };
}

/** Turns anything thrown while serving a request into a status and the JSON error body. */
export function toHttpError(error: unknown): HttpError {
  if (isRunnelError(error)) return httpError(error.code, error.message, error.details);

  const fastifyError = error as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  if (Array.isArray(fastifyError.validation)) {
    return fromValidation(fastifyError.validation, fastifyError.validationContext ?? "body");
  }
  switch (fastifyError.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return httpError("MalformedBody", `The request body is not valid JSON: ${fastifyError.message}. Send a JSON object.`);
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return httpError("PayloadTooLarge", "The request body is too large. Send a smaller body.");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return httpError("UnsupportedMediaType", `${fastifyError.message}. Send Content-Type: application/json.`);
    // The router's own refusals, before any route runs (see frameworkErrors in app.ts).
    case "FST_ERR_MAX_PARAM_LENGTH":
      return httpError("NotFound", "A part of the path is longer than any id or name can be; there is no such resource.");
    case "FST_ERR_BAD_URL":
      return httpError("MalformedBody", "The request's URL could not be decoded. Percent-encode its path and query.");
  }
  // The JSON parser throws SyntaxError with status 400 for some inputs; other
  // 4xx errors from Fastify or its plugins are the caller's, not bugs.
  if (error instanceof SyntaxError || fastifyError.statusCode === 400) {
    return httpError("MalformedBody", `The request could not be read: ${fastifyError.message ?? "malformed input"}.`);
  }
  return httpError("InternalError", "Something went wrong on the server. It has been logged; try again, and report it if it keeps happening.");
}

interface ValidationIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Names the field that failed validation, as a dotted path, with a sentence about it. */
function fromValidation(issues: ValidationIssue[], context: string): HttpError {
  const issue = issues[0];
  if (!issue) return httpError("ValidationError", `The ${context} is not valid.`, { field: context });
  const path = issue.instancePath
    .split("/")
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (issue.keyword === "required" && typeof issue.params.missingProperty === "string") {
    const field = [...path, issue.params.missingProperty].join(".");
    return httpError("ValidationError", `${field} is required in the ${context}.`, { field, location: context });
  }
  if (issue.keyword === "additionalProperties" && typeof issue.params.additionalProperty === "string") {
    const field = [...path, issue.params.additionalProperty].join(".");
    return httpError("ValidationError", `${field} is not a known field of the ${context}; remove it or check its spelling.`, {
      field,
      location: context,
    });
  }
  const field = path.length > 0 ? path.join(".") : context;
  const allowed = allowedValues(issues, issue.instancePath);
  if (allowed.length > 0) {
    const listed = allowed.map((value) => JSON.stringify(value));
    const must = listed.length <= 2 ? listed.join(" or ") : `one of ${listed.slice(0, -1).join(", ")} or ${listed.at(-1)}`;
    return httpError("ValidationError", `${field} must be ${must}.`, { field, location: context, allowed });
  }
  return httpError("ValidationError", `${field} ${issue.message ?? "is not valid"}.`, { field, location: context });
}

/**
 * The values a field may take, when what it failed was a constant or a list
 * of them (a union of literals fails each branch's `const` in turn): named,
 * rather than ajv's "must be equal to constant".
 */
function allowedValues(issues: ValidationIssue[], instancePath: string): unknown[] {
  const allowed: unknown[] = [];
  for (const issue of issues) {
    if (issue.instancePath !== instancePath) continue;
    if (issue.keyword === "const") allowed.push(issue.params.allowedValue);
    else if (issue.keyword === "enum" && Array.isArray(issue.params.allowedValues)) allowed.push(...issue.params.allowedValues);
    else if (issue.keyword !== "anyOf" && issue.keyword !== "oneOf") return [];
  }
  return [...new Set(allowed)];
}
