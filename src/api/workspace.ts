import { workspaceIdOf } from "../domain/accounts.js";
import { NotFoundError } from "../domain/errors.js";
import type { Principal } from "../engine/accounts.js";

/**
 * A workspace id (`o_…`) the caller gave that is not theirs. Every user has
 * one workspace, so another user's is answered exactly as an unknown one
 * (never revealing that it exists), with where to find the right id.
 */
export function workspaceNotFound(given: string): NotFoundError {
  const error = new NotFoundError("workspace", given);
  error.message += " Your workspace's id is listed by GET /v1/users/me/workspaces (each user has one).";
  return error;
}

/** Throws unless `given` is the caller's own workspace id. */
export function checkOwnWorkspace(principal: Principal, given: string): void {
  if (given !== workspaceIdOf(principal.user.id)) throw workspaceNotFound(given);
}
