import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { createResourceLimiter } from "../../src/sandbox/resources/resource-limiter.js";

/**
 * Nothing a runner started outlives it: when its cgroups are let go, what is
 * still in them is killed, whichever process it is (here a plain `sleep`
 * standing for a wrapper left waiting after its runner was stopped).
 */
describe("a runner's cgroups, let go", () => {
  const limiter = createResourceLimiter();
  // Where no cgroup can be made (RLIMIT_AS only), there is nothing to let go.
  const cgroups = limiter.kind !== "rlimit";

  it.runIf(cgroups)("kill what is still in them", async () => {
    const resources = limiter.forRunner(64);
    const command = resources.wrap({ command: "/bin/sleep", args: ["30"], cwd: "/" });
    const child = spawn(command.command, command.args, { cwd: command.cwd, stdio: "ignore" });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
    // The wrapper joins the cgroups and then execs sleep: give it the moment it needs.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(child.exitCode).toBeNull();
    resources.release();
    expect(await exited).toBe("SIGKILL");
    limiter.close();
  });
});
