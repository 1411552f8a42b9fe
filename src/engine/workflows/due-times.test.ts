import { describe, expect, it } from "vitest";
import { DueTimes } from "./due-times.js";

describe("DueTimes", () => {
  it("answers the earliest time still ahead, in any order of adding", () => {
    const due = new DueTimes();
    for (const at of [500, 200, 900, 200, 300]) due.add(at);
    expect(due.next(100)).toBe(200);
    expect(due.next(200)).toBe(300);
    expect(due.next(650)).toBe(900);
    expect(due.next(900)).toBeNull();
  });

  it("answers a time already past when the last look was before it (it fell due while the worker was busy)", () => {
    const due = new DueTimes();
    due.add(200);
    due.add(400);
    expect(due.next(150)).toBe(200);
    expect(due.next(200)).toBe(400);
  });

  it("forgets the latest times past its limit", () => {
    const due = new DueTimes(2);
    for (const at of [30, 10, 20]) due.add(at);
    expect(due.next(0)).toBe(10);
    expect(due.next(10)).toBe(20);
    expect(due.next(20)).toBeNull();
  });
});
