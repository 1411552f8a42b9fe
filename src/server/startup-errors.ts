import type { RunnelConfig } from "../config/config.js";

/**
 * Turns the usual reasons a server cannot start into one sentence that says
 * what happened and what to do; anything else keeps its own message.
 */
export function explainStartupError(error: unknown, config: RunnelConfig): string {
  const failure = withCode(error);
  const message = failure.message ?? String(error);

  if (failure.syscall === "listen" || failure.code === "EADDRINUSE" || failure.code === "EADDRNOTAVAIL") {
    if (failure.code === "EADDRINUSE") {
      return `port ${config.port} on ${config.host} is already in use. Stop what uses it, or choose another port with RUNNEL_PORT or --port.`;
    }
    if (failure.code === "EACCES") {
      return `not allowed to listen on port ${config.port} (ports below 1024 need privileges). Choose another with RUNNEL_PORT or --port.`;
    }
    return `cannot listen on ${config.host}:${config.port} (${failure.code ?? message}). Check RUNNEL_HOST and RUNNEL_PORT.`;
  }

  if (config.databaseUrl && isPostgresConnectionFailure(failure)) {
    return `cannot use the PostgreSQL database in DATABASE_URL (${describeDatabase(config.databaseUrl)}): ${message}. Check that it runs and that the URL is right.`;
  }

  if (["EACCES", "EPERM", "EROFS", "ENOTDIR", "ENOSPC", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_FULL"].includes(failure.code ?? "")) {
    return `cannot write to the data folder ${config.dataDir} (${failure.code}: ${message}). Choose a writable folder with RUNNEL_DATA_DIR or --data-dir.`;
  }

  return message;
}

// Connection-level failures, and the PostgreSQL error classes for a bad login (28) or a missing database (3D).
function isPostgresConnectionFailure(failure: { code?: string }): boolean {
  const code = failure.code ?? "";
  return ["ECONNREFUSED", "ENOTFOUND", "ETIMEDOUT", "ECONNRESET", "EAI_AGAIN"].includes(code) || code.startsWith("28") || code.startsWith("3D");
}

/** host:port/database, without the user's password. */
function describeDatabase(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `${url.hostname}:${url.port || "5432"}${url.pathname}`;
}

type Failure = { code?: string; syscall?: string; message?: string; cause?: unknown };

/** The first error in the cause chain that carries a code (wrappers such as the migrator's do not). */
function withCode(error: unknown): Failure {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    if (typeof (current as Failure).code === "string") return current as Failure;
    current = (current as Failure).cause;
  }
  return error as Failure;
}
