// Polling feeds for the RSS sources: conditional GETs (ETag / Last-Modified kept in
// this.db), one clear log line per feed that cannot be read, and the items not seen yet.
import { createHash } from "node:crypto";
import { parseFeed } from "../../common/feeds.mjs";

/** How many item keys each feed remembers (as short hashes), beyond the platform's dedupe of the last 100 ids. */
const SEEN_PER_FEED = 200;
export const MAX_FEEDS = 20;
const FETCH_TIMEOUT_MS = 15_000;

export const pollTimerProp = {
  type: "$.interface.timer",
  label: "Check every",
  description: 'How often the feed is read, as { "intervalSeconds": 900 } (every 15 minutes by default).',
  default: { intervalSeconds: 15 * 60 },
};

export const feedStateProp = {
  type: "$.service.db",
  label: "Feed state",
  description: "Kept by the source: each feed's ETag and Last-Modified, and the items it has seen.",
};

/** Throws a sentence naming the prop when a URL is not an http(s) address. */
export function assertFeedUrl(url, propName) {
  let parsed;
  try {
    parsed = new URL(String(url).trim());
  } catch {
    throw new Error(`Prop "${propName}": ${JSON.stringify(url)} is not an address; give the feed's full URL, such as https://example.com/feed.xml.`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`Prop "${propName}": ${JSON.stringify(url)} must start with http:// or https://.`);
  }
  return parsed.toString();
}

const shortHash = (text) => createHash("sha256").update(text).digest("base64url").slice(0, 12);

/** GETs a feed with the validators kept from the last answer; { notModified } on 304. */
async function fetchFeed(url, state) {
  const headers = { accept: "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5", "user-agent": "Runnel RSS source" };
  if (state.etag) headers["if-none-match"] = state.etag;
  if (state.lastModified) headers["if-modified-since"] = state.lastModified;
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (response.status === 304) return { notModified: true };
  const body = await response.text();
  if (!response.ok) throw new Error(`it answered HTTP ${response.status}`);
  return { body, etag: response.headers.get("etag") ?? undefined, lastModified: response.headers.get("last-modified") ?? undefined };
}

/** Why a fetch failed, in words: undici says only "fetch failed" and keeps the reason in `cause`. */
function whyUnreadable(error) {
  if (error?.name === "TimeoutError") return `it did not answer within ${FETCH_TIMEOUT_MS / 1000} s`;
  const cause = error?.cause?.message ?? error?.cause?.code;
  // The sandbox's network layer may repeat the reason in parentheses: "x (x)" is said once.
  if (error?.message === "fetch failed" && cause) return `it could not be fetched (${String(cause).replace(/^(.*) \(\1\)$/, "$1")})`;
  return error?.message ?? String(error);
}

/** One feed read: { notModified } | { feed, etag, lastModified } | { error }. Never throws. */
async function readFeed(url, state) {
  try {
    const fetched = await fetchFeed(url, state);
    if (fetched.notModified) return { notModified: true };
    return { feed: parseFeed(fetched.body), etag: fetched.etag, lastModified: fetched.lastModified };
  } catch (error) {
    return { error: whyUnreadable(error) };
  }
}

/**
 * Reads the feeds (side by side) and emits their items not seen before, oldest first.
 * A feed that cannot be fetched or parsed gets one log line and emits nothing; the
 * others are still read.
 */
export async function pollFeeds(source, urls) {
  const states = source.db.get("feeds") ?? {};
  const next = {};
  const several = urls.length > 1;
  const results = await Promise.all(urls.map((url) => readFeed(url, states[url] ?? { seen: [] })));
  urls.forEach((url, index) => {
    const state = states[url] ?? { seen: [] };
    const result = results[index];
    next[url] = state;
    if (result.notModified) return;
    if (result.error !== undefined) {
      console.log(`Feed ${url} could not be read: ${result.error}. Nothing was emitted from it${several ? "; the other feeds were read" : ""}.`);
      return;
    }
    const { feed } = result;
    const seen = new Set(state.seen);
    for (const item of feed.items) {
      if (item.key === undefined || seen.has(shortHash(item.key))) continue;
      const { key, ...fields } = item;
      const ts = item.published ? Date.parse(item.published) : NaN;
      source.$emit(
        { ...fields, feed: { url, title: feed.title, link: feed.link } },
        { id: key, summary: item.title ?? item.link ?? key, ...(Number.isNaN(ts) ? {} : { ts }) },
      );
    }
    // Remember the keys the feed holds now (newest kept when capped), and the validators.
    const keys = [...new Set([...feed.items.map((item) => item.key).filter((key) => key !== undefined).map(shortHash), ...state.seen])];
    next[url] = { etag: result.etag, lastModified: result.lastModified, seen: keys.slice(0, SEEN_PER_FEED) };
  });
  source.db.set("feeds", next);
}
