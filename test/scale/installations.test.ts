/**
 * The tests that start installations of several processes (api and worker
 * roles of the built binary over PostgreSQL, with Redis or PostgreSQL alone),
 * one after the other in one file: each holds PostgreSQL connections enough
 * that two at once could fill max_connections (test/helpers/test-cluster.ts
 * takes a lock across files for that), and as files of their own, a Vitest
 * worker that drew one while another ran sat blocked on that lock, doing
 * nothing (a quarter of these files' time in CI). Here they are one lane,
 * started first (test/setup/sequencer.ts) while the other workers take the
 * rest. Run one suite with `-t`, e.g.
 * `npx vitest run test/scale/installations.test.ts -t "run gate"`.
 */
import "./cluster.suite.js";
import "./lease.suite.js";
import "./gate.suite.js";
import "./roles.suite.js";
import "./timers.suite.js";
import "./shared-across-processes.suite.js";
import "./flow.suite.js";
import "./retries.suite.js";
import "./replay-from-step.suite.js";
