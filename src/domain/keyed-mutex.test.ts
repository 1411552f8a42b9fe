import { describe, expect, it } from "vitest";
import { KeyedMutex } from "./keyed-mutex.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("KeyedMutex", () => {
  it("runs tasks of one key one after another, in order, even when one fails", async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const task = (name: string, ms: number, fail = false) => async () => {
      log.push(`start ${name}`);
      await sleep(ms);
      log.push(`end ${name}`);
      if (fail) throw new Error(name);
      return name;
    };
    const results = await Promise.allSettled([mutex.run("a", task("1", 20, true)), mutex.run("a", task("2", 1)), mutex.run("a", task("3", 1))]);
    expect(log).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled", "fulfilled"]);
  });

  it("runs different keys in parallel, and drains", async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const a = mutex.run("a", async () => (await sleep(30), log.push("a")));
    const b = mutex.run("b", async () => (await sleep(5), log.push("b")));
    await mutex.drain();
    await Promise.all([a, b]);
    expect(log).toEqual(["b", "a"]);
  });
});
