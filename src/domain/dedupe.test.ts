import { describe, expect, it } from "vitest";
import { applyDedupe, isDedupeStrategy, type DedupeState, type DedupeStrategy, type PendingEmit } from "./dedupe.js";

const emit = (id?: string | number, ts?: number): PendingEmit => ({
  event: { id },
  ...(id === undefined ? {} : { id }),
  ...(ts === undefined ? {} : { ts }),
});
const ids = (emits: PendingEmit[]) => emits.map((e) => e.id);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Runs batches one after another, carrying the state through JSON as the database would. */
function runBatches(strategy: DedupeStrategy, batches: PendingEmit[][]) {
  let state: DedupeState | null = null;
  const accepted: Array<unknown[]> = [];
  for (const batch of batches) {
    const result = applyDedupe(strategy, state, batch);
    accepted.push(ids(result.accepted));
    state = JSON.parse(JSON.stringify(result.state)) as DedupeState | null;
  }
  return { accepted, state };
}

describe("isDedupeStrategy", () => {
  it.each([
    ["unique", true],
    ["greatest", true],
    ["last", true],
    ["Unique", false],
    ["", false],
    [null, false],
    [1, false],
  ])("%j → %s", (value, expected) => {
    expect(isDedupeStrategy(value)).toBe(expected);
  });
});

describe("applyDedupe without a strategy", () => {
  it("accepts everything, with or without ids, and keeps no state", () => {
    const batch = [emit(1), emit(), emit(1)];
    const result = applyDedupe(null, { strategy: "unique", ids: ["1"] }, batch);
    expect(result).toEqual({ accepted: batch, state: null, rejected: [] });
  });
});

describe("applyDedupe: an emit without id", () => {
  it.each(["unique", "greatest", "last"] as const)("is rejected under %s, the others go on", (strategy) => {
    const result = applyDedupe(strategy, null, [emit(), emit(5)]);
    expect(ids(result.accepted)).toEqual([5]);
    expect(result.rejected).toHaveLength(1);
    expect(result.rejected[0]?.reason).toMatch(/id is required when a dedupe strategy is set/);
  });

  it("refuses an id that is neither string nor number", () => {
    const bad = { event: 1, id: { x: 1 } } as unknown as PendingEmit;
    expect(applyDedupe("unique", null, [bad]).rejected[0]?.reason).toMatch(/string or a number/);
  });
});

describe("applyDedupe: unique", () => {
  it.each([
    ["new ids pass", [[emit(1), emit(2)]], [[1, 2]]],
    ["a repeat in a later batch is dropped", [[emit(1)], [emit(1), emit(2)]], [[1], [2]]],
    ["a repeat in the same batch is dropped", [[emit("a"), emit("b"), emit("a")]], [["a", "b"]]],
    ["the number 7 and the string '7' are the same id", [[emit(7)], [emit("7")]], [[7], []]],
  ])("%s", (_title, batches, expected) => {
    expect(runBatches("unique", batches).accepted).toEqual(expected);
  });

  it("remembers 100 ids and drops the oldest first", () => {
    const first = range(1, 101).map((n) => emit(n));
    const { accepted, state } = runBatches("unique", [first, [emit(1), emit(3), emit(101)]]);
    expect(accepted[0]).toHaveLength(101);
    // 1 was evicted by the 101st id, so it passes again (and evicts 2); 3 and 101 are still cached.
    expect(accepted[1]).toEqual([1]);
    expect(state).toEqual({ strategy: "unique", ids: [...range(3, 101), 1].map(String) });
  });

  it("ignores state left by another strategy", () => {
    const result = applyDedupe("unique", { strategy: "greatest", greatest: "9" }, [emit(1)]);
    expect(ids(result.accepted)).toEqual([1]);
  });

  it("reports rejections in emit order", () => {
    const result = applyDedupe("unique", { strategy: "unique", ids: ["1"] }, [emit(1), emit(), emit(1)]);
    expect(result.rejected.map((r) => r.emit.id)).toEqual([1, undefined, 1]);
    expect(result.rejected[0]?.reason).toMatch(/already emitted/);
  });
});

describe("applyDedupe: greatest", () => {
  it.each([
    ["increasing ids pass", [[emit(1), emit(2), emit(3)]], [[1, 2, 3]]],
    ["only ids above the greatest so far pass", [[emit(5), emit(3), emit(7), emit(7)]], [[5, 7]]],
    ["the greatest carries over", [[emit(10)], [emit(9), emit(10), emit(11)]], [[10], [11]]],
    ["numeric strings and numbers mix", [[emit("10"), emit(9), emit(11), emit("12")]], [["10", 11, "12"]]],
    ["fractions compare as numbers", [[emit(1.5), emit("1.25"), emit(2)]], [[1.5, 2]]],
    ["big numeric strings compare exactly", [[emit("9007199254740992"), emit("9007199254740993")]], [["9007199254740992", "9007199254740993"]]],
  ])("%s", (_title, batches, expected) => {
    expect(runBatches("greatest", batches).accepted).toEqual(expected);
  });

  it("rejects a non-numeric id, saying it must be numeric", () => {
    const result = applyDedupe("greatest", null, [emit("abc"), emit(4)]);
    expect(ids(result.accepted)).toEqual([4]);
    expect(result.rejected[0]?.reason).toMatch(/not numeric.*needs numeric ids/);
  });

  it("rejects a smaller id, naming the greatest", () => {
    const result = applyDedupe("greatest", { strategy: "greatest", greatest: "8" }, [emit(3)]);
    expect(result.rejected[0]?.reason).toMatch(/not greater than 8/);
    expect(result.state).toEqual({ strategy: "greatest", greatest: "8" });
  });

  it("keeps the greatest as text that survives JSON", () => {
    const { state } = runBatches("greatest", [[emit("123456789012345678901234567890")]]);
    expect(state).toEqual({ strategy: "greatest", greatest: "123456789012345678901234567890" });
  });

  it("starts with no greatest", () => {
    expect(applyDedupe("greatest", null, []).state).toEqual({ strategy: "greatest", greatest: null });
  });
});

describe("applyDedupe: last", () => {
  it.each([
    ["with no state, everything passes", [[emit("a"), emit("b")]], [["a", "b"]]],
    ["only events after the cached one pass", [[emit("a"), emit("b")], [emit("a"), emit("b"), emit("c"), emit("d")]], [["a", "b"], ["c", "d"]]],
    ["when the cached id is the last, nothing passes", [[emit("a"), emit("b")], [emit("a"), emit("b")]], [["a", "b"], []]],
    ["when no id matches, everything passes", [[emit("a")], [emit("x"), emit("y")]], [["a"], ["x", "y"]]],
    ["numbers match their text", [[emit(1), emit(2)], [emit("2"), emit(3)]], [[1, 2], [3]]],
    ["the last occurrence of the cached id counts", [[emit("a")], [emit("a"), emit("b"), emit("a"), emit("c")]], [["a"], ["c"]]],
  ])("%s", (_title, batches, expected) => {
    expect(runBatches("last", batches).accepted).toEqual(expected);
  });

  it("caches the id of the last emitted event", () => {
    const { state } = runBatches("last", [[emit("a"), emit("b")], [emit("b")]]);
    expect(state).toEqual({ strategy: "last", lastId: "b" });
  });

  it("caches the emitted event with the newest ts when events carry ts", () => {
    const result = applyDedupe("last", null, [emit("new", 300), emit("old", 100), emit("mid", 200)]);
    expect(result.state).toEqual({ strategy: "last", lastId: "new" });
  });

  it("rejects the events at or before the cached one", () => {
    const result = applyDedupe("last", { strategy: "last", lastId: "b" }, [emit("a"), emit("b"), emit("c")]);
    expect(result.rejected.map((r) => r.emit.id)).toEqual(["a", "b"]);
    expect(result.rejected[0]?.reason).toMatch(/at or before "b"/);
  });
});
