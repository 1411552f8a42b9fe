import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { sqliteModulePath } from "../../src/store/sqlite/sqlite-binding.js";

const run = promisify(execFile);

// Statements that become garbage, then idle time for V8's own collector tasks, which enter no JavaScript
// context. better-sqlite3 12 built for Node 24.19+ aborts there ("Assertion failed: (env) != nullptr" in
// Statement::~Statement), in 4 runs of 5 at 20,000 statements; a process of its own, since an abort
// would take the test worker with it.
const GARBAGE_THEN_IDLE = `
const Database = require(process.env.SQLITE_MODULE);
const database = new Database(":memory:");
for (let i = 0; i < 100000; i++) database.pragma("user_version");
const until = Date.now() + 1500;
const churn = () => {
  for (let i = 0; i < 1000; i++) [{ i }];
  if (Date.now() < until) setTimeout(churn, 10);
  else console.log("alive");
};
churn();
`;

describe("the better-sqlite3 build this Node.js loads", () => {
  it(`survives statements freed by the garbage collector (Node ${process.versions.node})`, async () => {
    const { stdout } = await run(process.execPath, ["-e", GARBAGE_THEN_IDLE], { env: { ...process.env, SQLITE_MODULE: sqliteModulePath } });
    expect(stdout.trim()).toBe("alive");
  });
});
