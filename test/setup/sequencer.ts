import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Seconds each file took in a full run (scripts/test-durations.mjs writes it from Vitest's cache). */
const durations: Record<string, number> = JSON.parse(readFileSync(new URL("./durations.json", import.meta.url), "utf8"));

/**
 * The longest files first, by the committed durations: a fresh clone (CI)
 * has no cache of durations, and Vitest then orders by file size, which put
 * small, long files last (the installations' lane, about four minutes, the
 * chaos test, the queue conformance files): the suite ended with one
 * worker running them while the other sat idle. Longest first leaves the
 * short ones to fill the end. Files not in the table (new ones, or under a
 * second) come after, in Vitest's order.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const seconds = (spec: TestSpecification) => durations[relative(spec.project.config.root, spec.moduleId)] ?? 0;
    // Array.prototype.sort is stable: equal ones (the files not in the table) keep Vitest's order.
    return [...sorted].sort((a, b) => seconds(b) - seconds(a));
  }
}
