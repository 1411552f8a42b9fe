/** One server-sent event message. `event` is "message" when the server named none. */
export interface SseMessage {
  event: string;
  data: string;
  /** The message's own `id:` field, or null when it had none. */
  id: string | null;
}

/**
 * The text/event-stream framing, fed in chunks as they arrive: a chunk may end
 * in the middle of a line, or between the CR and LF of one line break.
 * Comment lines (":" first) are keep-alives and are dropped.
 */
export class SseParser {
  private buffer = "";
  private afterCr = false;
  private event = "";
  private data: string[] = [];
  private id: string | null = null;

  /** Takes the next chunk of text; returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    // A CR at the end of the last chunk already ended its line; a LF starting this one belongs to it.
    if (this.afterCr && text.startsWith("\n")) text = text.slice(1);
    this.afterCr = text.endsWith("\r");
    this.buffer += text;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop() ?? "";
    const messages: SseMessage[] = [];
    for (const line of lines) {
      const message = this.line(line);
      if (message) messages.push(message);
    }
    return messages;
  }

  private line(line: string): SseMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
    // "retry" and unknown fields: nothing a client of this API needs.
    return null;
  }

  private dispatch(): SseMessage | null {
    const message = this.data.length > 0 ? { event: this.event || "message", data: this.data.join("\n"), id: this.id } : null;
    this.event = "";
    this.data = [];
    this.id = null;
    return message;
  }
}
