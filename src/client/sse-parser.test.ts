import { describe, expect, it } from "vitest";
import { SseParser } from "./sse-parser.js";

function parseAll(chunks: string[]) {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

describe("SseParser", () => {
  it.each([
    ["one message", ['id: 1-0\ndata: {"a":1}\n\n'], [{ event: "message", data: '{"a":1}', id: "1-0" }]],
    ["a named event", ["event: log\ndata: x\n\n"], [{ event: "log", data: "x", id: null }]],
    ["comments only", [": connected\n\n: keep-alive\n\n"], []],
    ["split mid-line", ["da", "ta: hel", "lo\n", "\n"], [{ event: "message", data: "hello", id: null }]],
    ["CRLF split between CR and LF", ["data: a\r", "\n\r\n"], [{ event: "message", data: "a", id: null }]],
    ["bare CR line breaks", ["data: a\r\rdata: b\r\r"], [{ event: "message", data: "a", id: null }, { event: "message", data: "b", id: null }]],
    ["multi-line data", ["data: a\ndata: b\n\n"], [{ event: "message", data: "a\nb", id: null }]],
    ["no space after the colon", ["event:closed\ndata:{}\n\n"], [{ event: "closed", data: "{}", id: null }]],
    ["an unfinished message is held back", ["data: a\n"], []],
    ["the id does not leak into the next message", ["id: 7\ndata: a\n\ndata: b\n\n"], [{ event: "message", data: "a", id: "7" }, { event: "message", data: "b", id: null }]],
  ])("%s", (_name, chunks, expected) => {
    expect(parseAll(chunks)).toEqual(expected);
  });
});
