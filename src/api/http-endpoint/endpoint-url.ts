import { parse as parseQuery } from "node:querystring";

/** Sources' public endpoints live under this prefix: `/e/<token>`, and any path below it. */
export const ENDPOINT_PREFIX = "/e/";

/** Where a request to a source's endpoint goes, read from its URL. */
export interface EndpointAddress {
  token: string;
  /** The path below the token, decoded, from "/". */
  path: string;
  /** Query parameters; a repeated one is an array. */
  query: Record<string, string | string[]>;
}

/** Decoded where it can be; a malformed escape is kept as sent rather than refused, since the source sees the path as data. */
function decodePath(path: string): string {
  if (!path.includes("%")) return path;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The endpoint a request URL addresses, or null when it is not one (the API's
 * routes, or `/e/` without a token). Does not look the token up.
 */
export function parseEndpointUrl(url: string): EndpointAddress | null {
  if (!url.startsWith(ENDPOINT_PREFIX)) return null;
  const queryAt = url.indexOf("?");
  const pathname = queryAt < 0 ? url : url.slice(0, queryAt);
  const tokenEnd = pathname.indexOf("/", ENDPOINT_PREFIX.length);
  const token = tokenEnd < 0 ? pathname.slice(ENDPOINT_PREFIX.length) : pathname.slice(ENDPOINT_PREFIX.length, tokenEnd);
  if (token === "") return null;
  return {
    token,
    path: tokenEnd < 0 ? "/" : decodePath(pathname.slice(tokenEnd)),
    // querystring's object has no prototype; the source gets a plain one.
    query: queryAt < 0 || queryAt === url.length - 1 ? {} : { ...parseQuery(url.slice(queryAt + 1)) } as Record<string, string | string[]>,
  };
}
