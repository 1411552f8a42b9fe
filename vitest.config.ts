import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/setup/bubblewrap.ts", "test/setup/network-tools.ts", "test/setup/chromium.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and child processes, each in a process of its own.
    pool: "forks",
    // Two files at once on two cores: a file mostly waits (on its server, children, sockets, the browser), so
    // one worker leaves a core idle. Vitest's own default is one fewer than the cores, which is one here.
    // Measured on test/workflows + test/api (35 files, loaded machine): one worker 449 s, two 253 s.
    maxWorkers: 2,
  },
});
