import { defineConfig } from "vitest/config";
import LongestFirst from "./test/setup/sequencer.js";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/setup/bubblewrap.ts", "test/setup/network-tools.ts", "test/setup/chromium.ts", "test/setup/postgres-catalog.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and child processes, each in a process of its own.
    pool: "forks",
    // The longest files first, by test/setup/durations.json (a fresh clone has no cache of durations).
    sequence: { sequencer: LongestFirst },
    // Three files at once on two cores: a file mostly waits (on its server, children, sockets, the browser), so
    // one worker per core leaves the cores half idle (the processes used 448 s of CPU in a 571 s run with two).
    // Vitest's own default is one fewer than the cores, which is one here. Session 21, same machine, back to
    // back: 571 s with two, 409 s with three, CPU 412 s; the installations' lane (test/scale, about 250 s) is
    // then the longest path. Session 15 had gone back to two when three were slower in CI and failed
    // timing-bound tests: PostgreSQL's catalogs were bloating then (no autovacuum on this machine kind), which
    // test/setup/postgres-catalog.ts now vacuums. docs/architecture.md, "Test suite time".
    maxWorkers: 3,
    // One process per worker for all its files, not one per file: each file's fresh process re-imported the server
    // (vite's transform, Fastify, Kysely, the engine), about a second per file, 177 files. The tests share no
    // module state that matters (no module mocks; each starts its own server, store and folders). Measured on the
    // whole suite, same machine and load: 9 min with isolation, 4 min 17 s without.
    isolate: false,
  },
});
