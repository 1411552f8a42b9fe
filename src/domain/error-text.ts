/**
 * An error's name and message as one headline, without a doubled prefix: a
 * plain `Error` adds nothing to its message ("kaput", not "Error: kaput"
 * after a code that says it failed), and a message that already starts with
 * its name keeps just the one.
 */
export function errorHeadline(name: string | null | undefined, message: string): string {
  const text = withoutErrorPrefix(message);
  if (!name || name === "Error" || text.startsWith(`${name}:`)) return text;
  return `${name}: ${text}`;
}

/** A message without the "Error: " something wrapped it in on the way (once or more). */
export function withoutErrorPrefix(message: string): string {
  return message.replace(/^(?:Error:\s*)+/, "");
}

/**
 * At most `max` characters of one line of text, cut at a word boundary with
 * an ellipsis, so that a long message never ends mid-word; a single word
 * longer than half the room is cut where it must be.
 */
export function cutAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max - 1);
  // The head ends a word when the next character is a space; otherwise back up to the last space.
  const space = /\s/.test(text[max - 1] ?? "") ? head.length : head.lastIndexOf(" ");
  return `${(space > max / 2 ? head.slice(0, space) : head).trimEnd()}…`;
}
