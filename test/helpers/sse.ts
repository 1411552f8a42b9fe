import { SseParser, type SseMessage } from "../../src/client/sse-parser.js";

export interface OpenStream {
  status: number;
  contentType: string | null;
  /** Waits for the first message (seen so far or to come) that `matches`; fails after `timeoutMs`. */
  next(matches: (message: SseMessage) => boolean, timeoutMs?: number): Promise<SseMessage>;
  close(): Promise<void>;
}

/** Opens an SSE stream with a Bearer key and reads it in the background until closed. */
export async function openStream(url: string, key: string | null): Promise<OpenStream> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {}, signal: abort.signal });
  const messages: SseMessage[] = [];
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reading =
    response.status === 200 && response.body
      ? (async () => {
          const reader = response.body!.getReader();
          for (;;) {
            const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
            if (chunk.done) return;
            messages.push(...parser.push(decoder.decode(chunk.value, { stream: true })));
          }
        })()
      : response.text().then(() => undefined);
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    async next(matches, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = messages.find(matches);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no matching SSE message from ${url}; seen: ${JSON.stringify(messages).slice(0, 1000)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async close() {
      abort.abort();
      await reading;
    },
  };
}
