import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/setup/bubblewrap.ts", "test/setup/network-tools.ts", "test/setup/chromium.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and child processes, each in a process of its own.
    pool: "forks",
    // Three files at once on two cores: a file mostly waits (on its server, children, sockets, the browser), so
    // the cores stay half idle with one file per core (the whole suite, two workers: 15 min of CPU in 16.8 min of
    // wall time). Vitest's own default is one fewer than the cores, which is one here. Measured on the whole suite,
    // same machine: two workers 969 s, three 663 s, four 648 s (the multi-process tests then slow down: the lease
    // file 69 s -> 147 s), so three. Measured earlier on test/workflows + test/api: one worker 449 s, two 253 s.
    maxWorkers: 3,
    // One process per worker for all its files, not one per file: each file's fresh process re-imported the server
    // (vite's transform, Fastify, Kysely, the engine), about a second per file, 177 files. The tests share no
    // module state that matters (no module mocks; each starts its own server, store and folders). Measured on the
    // whole suite, same machine and load: 9 min with isolation, 4 min 17 s without.
    isolate: false,
  },
});
