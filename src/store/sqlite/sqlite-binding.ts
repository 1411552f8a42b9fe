/**
 * Which build of better-sqlite3 this Node.js runs.
 *
 * better-sqlite3 12 wraps its objects in Node's own `node::ObjectWrap`. From
 * Node 24.19 on, that class's destructor checks that a JavaScript context is
 * entered, and V8 frees unreachable objects from background GC tasks that
 * enter none: any statement that becomes garbage (one `pragma()` call makes
 * one) aborts the process with `Assertion failed: (env) != nullptr`, on the
 * main thread as on a worker. better-sqlite3 13 is built on Node-API and is
 * free of it, but needs Node 22 and crashes on Node 20. So both are installed:
 * 12 as a dependency, 13 as an optional one that npm skips, without a
 * warning, on a Node its `engines` excludes; Node 22 and newer load 13.
 */
import { createRequire } from "node:module";
import type SqliteDatabase from "better-sqlite3";

const require = createRequire(import.meta.url);
const NEWER_BUILD = "better-sqlite3-13";

/** The resolved path of the module, for a worker thread that must load the same build. */
export const sqliteModulePath: string = resolveBuild();

/** better-sqlite3's Database class, from the build this Node.js can run. */
export const SqliteDatabaseClass: typeof SqliteDatabase = require(sqliteModulePath) as typeof SqliteDatabase;

function resolveBuild(): string {
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 22) return require.resolve("better-sqlite3");
  try {
    return require.resolve(NEWER_BUILD);
  } catch {
    throw new Error(
      `Node.js ${process.versions.node} needs the package ${NEWER_BUILD}, which is not installed (npm skips it when it installs under Node.js 20, or with --omit=optional). Run \`npm ci\` again with this Node.js.`,
    );
  }
}
