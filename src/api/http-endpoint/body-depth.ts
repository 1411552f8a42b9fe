/**
 * How deep a JSON body nests, found without parsing it: a body of 20,000
 * nested brackets parses, but every recursive step after (serialising the
 * event, storing it, showing it) may overflow the stack, and a batch of
 * requests shares those steps. So it is refused at the door, alone.
 */

/** Arrays and objects inside each other, at most. Real webhook payloads nest a few dozen levels at most. */
export const MAX_BODY_DEPTH = 256;

/** Whether the content type is one whose body a source gets parsed as JSON (runner/http-body.ts). */
export function isJsonContentType(contentType: string | string[] | undefined): boolean {
  const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || type.endsWith("+json");
}

/**
 * The deepest nesting of `[` and `{` in `text`, outside strings, counted up
 * to `stopAbove + 1` (the scan stops there). Iterative: no input can make it
 * overflow. Not a validator: brackets that do not match still count.
 */
export function jsonNestingDepth(text: string, stopAbove: number = MAX_BODY_DEPTH): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c /* \ */) index += 1;
      else if (code === 0x22 /* " */) inString = false;
      continue;
    }
    if (code === 0x22) inString = true;
    else if (code === 0x5b /* [ */ || code === 0x7b /* { */) {
      depth += 1;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (code === 0x5d /* ] */ || code === 0x7d /* } */) {
      if (depth > 0) depth -= 1;
    }
  }
  return deepest;
}
