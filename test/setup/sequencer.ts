import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Vitest's order (failed first, then longest by its cache, else largest
 * file), with the installations' lane first: it is the longest file by far
 * (about eight minutes), but small, and a fresh clone (CI) has no cache of
 * durations, so by size it came last and made the suite's tail.
 */
export default class InstallationsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const first = (spec: TestSpecification) => (spec.moduleId.endsWith("test/scale/installations.test.ts") ? 0 : 1);
    return [...sorted].sort((a, b) => first(a) - first(b));
  }
}
