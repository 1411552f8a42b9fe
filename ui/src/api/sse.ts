import { useEffect, useRef, useState } from "react";

export interface SseMessage {
  /** The SSE `event:` name ("message" when none): for a source's events, the channel. */
  event: string;
  data: string;
  id: string | null;
}

export type StreamState = "connecting" | "open" | "reconnecting" | "closed";

/**
 * Follows a server-sent event stream of the API, authenticated by the session
 * cookie. Read with fetch rather than EventSource: a source's stream names
 * each message after its channel, and EventSource only hands over names
 * listened for in advance. Reconnects after a dropped connection (and
 * `onReconnect` lets the page catch up on what it missed); stops for good on
 * a 4xx or when the server ends the stream with `$closed`.
 */
export function useServerEvents(url: string | null, onMessage: (message: SseMessage) => void, onReconnect?: () => void): StreamState {
  const [state, setState] = useState<StreamState>("connecting");
  const handlers = useRef({ onMessage, onReconnect });
  handlers.current = { onMessage, onReconnect };

  useEffect(() => {
    if (!url) return;
    const controller = new AbortController();
    let attempt = 0;

    const run = async () => {
      while (!controller.signal.aborted) {
        setState(attempt === 0 ? "connecting" : "reconnecting");
        let ended: "closed" | "dropped" = "dropped";
        try {
          const response = await fetch(url, { credentials: "same-origin", headers: { accept: "text/event-stream" }, signal: controller.signal });
          if (response.status >= 400 && response.status < 500) {
            setState("closed");
            return;
          }
          if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
          if (attempt > 0) handlers.current.onReconnect?.();
          attempt = 0;
          setState("open");
          ended = await readStream(response.body, (message) => handlers.current.onMessage(message));
        } catch {
          if (controller.signal.aborted) return;
        }
        if (ended === "closed") {
          setState("closed");
          return;
        }
        attempt += 1;
        // 1 s, 2 s, 4 s … at most 15 s between tries.
        await new Promise((resolve) => setTimeout(resolve, Math.min(15_000, 1000 * 2 ** (attempt - 1))));
      }
    };
    void run();
    return () => controller.abort();
  }, [url]);

  return state;
}

/** Parses `text/event-stream` until the stream ends; "closed" when the server said `$closed` (the source was deleted). */
async function readStream(body: ReadableStream<Uint8Array>, onMessage: (message: SseMessage) => void): Promise<"closed" | "dropped"> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id: string | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return "dropped";
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (data.length > 0) {
          const message = { event: event || "message", data: data.join("\n"), id };
          if (message.event === "$closed") {
            await reader.cancel();
            return "closed";
          }
          onMessage(message);
        }
        event = "";
        data = [];
        id = null;
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const fieldValue = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event = fieldValue;
      else if (field === "data") data.push(fieldValue);
      else if (field === "id") id = fieldValue;
    }
  }
}
