import pino, { type Logger } from "pino";
import pretty from "pino-pretty";
import type { LogLevel } from "../config/config.js";

export interface LoggerOptions {
  level: LogLevel;
  format: "json" | "pretty";
}

/** Structured logs: JSON lines for machines, or the same records made readable for a terminal. */
export function createLogger(options: LoggerOptions): Logger {
  const base = {
    level: options.level,
    base: { service: "runnel" },
    // A request's Authorization header is a secret; never let it reach a log line.
    redact: { paths: ["req.headers.authorization", "headers.authorization"], censor: "[redacted]" },
  };
  if (options.format === "pretty") {
    return pino(base, pretty({ colorize: true, sync: true, ignore: "pid,hostname,service", translateTime: "HH:MM:ss.l" }));
  }
  return pino(base);
}
