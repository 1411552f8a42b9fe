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
    // Two files at once on two cores: a file mostly waits (on its server, children, sockets, the browser), so
    // one worker leaves a core idle. Vitest's own default is one fewer than the cores, which is one here. Three
    // made the whole suite faster on a quiet machine (969 s -> 663 s) but not CI's runs (Node 20's share 852-989 s
    // in three fresh-clone runs, against about 700 s with two), and each run of them failed two or three other
    // timing-bound tests under that load. docs/architecture.md, "Test suite time".
    maxWorkers: 2,
    // One process per worker for all its files, not one per file: each file's fresh process re-imported the server
    // (vite's transform, Fastify, Kysely, the engine), about a second per file, 177 files. The tests share no
    // module state that matters (no module mocks; each starts its own server, store and folders). Measured on the
    // whole suite, same machine and load: 9 min with isolation, 4 min 17 s without.
    isolate: false,
  },
});
