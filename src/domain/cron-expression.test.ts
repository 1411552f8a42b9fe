import { describe, expect, it } from "vitest";
import { explainCronProblem } from "./cron-expression.js";

describe("explainCronProblem", () => {
  it("accepts valid expressions", () => {
    for (const valid of ["0 * * * *", "*/15 9-17 * * MON-FRI", "30 0 0 1 * *", "0 0 L * *"]) expect(explainCronProblem(valid), valid).toBeNull();
  });

  it("names the field at fault, its position and what it takes", () => {
    expect(explainCronProblem("0 0 32 * *")).toBe('"0 0 32 * *": field 3 of 5 (day of month, at character 5) is "32"; the day of month takes 1-31 (or L for the last day), each field a value, *, a list (1,15), a range (1-5) or a step (*/10).');
    expect(explainCronProblem("61 * * * *")).toContain('field 1 of 5 (minute, at character 1) is "61"; the minute takes 0-59');
    expect(explainCronProblem("0  0 * 13 *")).toContain('field 4 of 5 (month, at character 8) is "13"');
    expect(explainCronProblem("0 0 * * mon-xyz")).toContain("field 5 of 5 (day of week, at character 9)");
    expect(explainCronProblem("5 0 0 * * *")).toBeNull();
    expect(explainCronProblem("60 0 0 * * *")).toContain("field 1 of 6 (second, at character 1)");
  });

  it("says how many fields an expression has and needs", () => {
    expect(explainCronProblem("* * *")).toBe('"* * *" has 3 fields; a cron expression has 5: minute hour day-of-month month day-of-week (like "0 * * * *" for every hour), or 6 with seconds first.');
  });
});
