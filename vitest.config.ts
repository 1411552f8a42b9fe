import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    globalSetup: ["test/setup/bubblewrap.ts", "test/setup/network-tools.ts", "test/setup/chromium.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and child processes; two cores, two workers.
    pool: "forks",
  },
});
