import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { autocannon, type LoadFigures } from "../autocannon.js";
import { wrk } from "./wrk.js";

/** One load generator for every target of a run, so that their figures compare. */
export interface LoadGenerator {
  name: "wrk" | "autocannon";
  post(url: string, options: { seconds: number; connections: number; body: string }): Promise<LoadFigures>;
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * wrk when it is on PATH (native: it takes less of the machine from the
 * servers than autocannon, a Node process, does), else autocannon.
 * RUNNEL_BENCH_LOAD=wrk or =autocannon chooses instead.
 */
export function chooseLoadGenerator(): LoadGenerator {
  const wanted = process.env.RUNNEL_BENCH_LOAD;
  if (wanted !== undefined && wanted !== "wrk" && wanted !== "autocannon") throw new Error(`RUNNEL_BENCH_LOAD is "${wanted}"; it may be "wrk" or "autocannon".`);
  const hasWrk = onPath("wrk");
  if (wanted === "wrk" && !hasWrk) throw new Error("RUNNEL_BENCH_LOAD=wrk, but wrk is not on PATH; install it (e.g. apt-get install wrk) or unset RUNNEL_BENCH_LOAD.");
  if (wanted === "wrk" || (wanted === undefined && hasWrk)) return { name: "wrk", post: wrk };
  return { name: "autocannon", post: (url, options) => autocannon(url, { ...options, method: "POST" }) };
}
