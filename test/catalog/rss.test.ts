import { createServer, type IncomingMessage, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { catalogCode } from "../helpers/catalog.js";
import { freePort } from "../helpers/ports.js";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, eventually, logsOf } from "../helpers/sources.js";

/**
 * The RSS sources against a real local HTTP server serving RSS 2.0, RSS 1.0
 * (RDF), Atom, a malformed feed, a page that is not a feed and a 404; ETag and
 * Last-Modified answered with 304 when the source sends them back.
 */

const rssItem = (n: number, day: number) =>
  `<item><title>Story ${n}</title><link>http://news.test/${n}</link><guid isPermaLink="false">story-${n}</guid><pubDate>${new Date(Date.UTC(2026, 0, day)).toUTCString()}</pubDate><description>About ${n}</description><category>news</category></item>`;
const rss = (items: string[]) => `<?xml version="1.0"?><rss version="2.0"><channel><title>News</title><link>http://news.test/</link>${items.join("")}</channel></rss>`;

const ATOM = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title type="text">Blog</title><link href="http://blog.test/"/>
<entry><id>urn:post:1</id><title>First post</title><link rel="alternate" href="http://blog.test/1"/><updated>2026-02-01T10:00:00Z</updated><author><name>Ada</name></author><content type="html"><![CDATA[<p>Hello &amp; welcome</p>]]></content></entry>
</feed>`;
/** An RSS 1.0 feed of `count` items, dated one day apart from 1 March 2026. */
const rdf = (count: number) => `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://old.test/"><title>Old school</title><link>http://old.test/</link></channel>
${Array.from({ length: count }, (_, i) => `<item rdf:about="http://old.test/${i + 1}"><title>Item ${i + 1}</title><link>http://old.test/${i + 1}</link><dc:date>2026-03-0${Math.min(i + 1, 9)}T00:00:00Z</dc:date><dc:creator>Bob</dc:creator></item>`).join("\n")}
</rdf:RDF>`;
const LAST_MODIFIED = "Sun, 01 Feb 2026 10:00:00 GMT";

interface Hit {
  path: string;
  headers: IncomingMessage["headers"];
  status: number;
}

let server: TestServer;
let feeds: Server;
let base = "";
const hits: Hit[] = [];
let rssItems = [rssItem(1, 1), rssItem(2, 2)];
let rssEtag = '"v1"';
const code: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer({ RUNNEL_EGRESS_ALLOW: "127.0.0.1" });
  for (const slug of ["new-item-in-feed", "new-item-from-multiple-feeds"]) code[slug] = await catalogCode(`rss/sources/${slug}/${slug}.mjs`);
  feeds = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    const answer = (status: number, headers: Record<string, string> = {}, body = "") => {
      hits.push({ path, headers: request.headers, status });
      response.writeHead(status, headers).end(body);
    };
    if (path === "/news.xml") {
      if (request.headers["if-none-match"] === rssEtag) return answer(304, { etag: rssEtag });
      return answer(200, { "content-type": "application/rss+xml", etag: rssEtag }, rss(rssItems));
    }
    if (path === "/blog.atom") {
      if (request.headers["if-modified-since"] === LAST_MODIFIED) return answer(304);
      return answer(200, { "content-type": "application/atom+xml", "last-modified": LAST_MODIFIED }, ATOM);
    }
    if (path === "/old.rdf") return answer(200, { "content-type": "application/rdf+xml" }, rdf(1));
    if (path === "/growing.rdf") return answer(200, { "content-type": "application/rdf+xml" }, rdf(hitsOf("/growing.rdf").length + 1));
    if (path === "/broken.xml") return answer(200, { "content-type": "application/rss+xml" }, "<rss><channel><item><title>Cut off</title></channel></rss>");
    if (path === "/page.html") return answer(200, { "content-type": "text/html" }, "<html><body>not a feed</body></html>");
    return answer(404, { "content-type": "text/plain" }, "no such feed");
  });
  await new Promise<void>((resolve) => feeds.listen(0, "127.0.0.1", resolve));
  const address = feeds.address();
  base = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
});
afterAll(async () => {
  feeds.closeAllConnections();
  await new Promise((resolve) => feeds.close(resolve));
  await server.close();
});

const deploy = (slug: string, name: string, configured_props: Record<string, unknown>) =>
  deploySource(server, server.adminKey, { component_code: code[slug], name, configured_props });
async function runNow(sourceId: string): Promise<void> {
  const run = await call(server.url, "POST", `/v1/sources/${sourceId}/run`, { key: server.adminKey, json: {} });
  if (run.status >= 300) throw new Error(`run failed: ${run.status} ${JSON.stringify(run.body)}`);
}
/** Events oldest first. */
const eventsIn = async (sourceId: string) => (await eventsOf(server, server.adminKey, sourceId)).reverse();
const hitsOf = (path: string) => hits.filter((hit) => hit.path === path);

describe("rss-new-item-in-feed", () => {
  it("emits each item once, oldest first, sends the ETag back and takes a 304", async () => {
    // The deploy reads the feed once: its items are there at once.
    const source = await deploy("new-item-in-feed", "news", { url: `${base}/news.xml` });
    const first = await eventsIn(source.id);
    expect(first.map((e) => e.event.title)).toEqual(["Story 1", "Story 2"]);
    expect(first[0].event).toMatchObject({
      guid: "story-1",
      link: "http://news.test/1",
      published: "2026-01-01T00:00:00.000Z",
      summary: "About 1",
      categories: ["news"],
      format: "rss",
      feed: { url: `${base}/news.xml`, title: "News", link: "http://news.test/" },
    });
    expect(first[0].metadata.summary).toBe("Story 1");

    await runNow(source.id);
    const second = hitsOf("/news.xml").at(-1)!;
    expect(second.headers["if-none-match"]).toBe('"v1"');
    expect(second.status).toBe(304);
    expect(await eventsIn(source.id)).toHaveLength(2);

    // A new item (and the old ones again, in another order) under a new ETag: only the new one is emitted.
    rssItems = [rssItem(3, 3), rssItem(2, 2), rssItem(1, 1)];
    rssEtag = '"v2"';
    await runNow(source.id);
    expect((await eventsIn(source.id)).map((e) => e.event.guid)).toEqual(["story-1", "story-2", "story-3"]);
    expect(hitsOf("/news.xml").at(-1)).toMatchObject({ status: 200, headers: expect.objectContaining({ "if-none-match": '"v1"' }) });
  });

  it("reads Atom with Last-Modified sent back as If-Modified-Since", async () => {
    const source = await deploy("new-item-in-feed", "blog", { url: `${base}/blog.atom` });
    await runNow(source.id);
    const [event, ...rest] = await eventsIn(source.id);
    expect(rest).toEqual([]);
    expect(event.event).toMatchObject({ guid: "urn:post:1", title: "First post", link: "http://blog.test/1", author: "Ada", content: "<p>Hello &amp; welcome</p>", format: "atom", feed: { title: "Blog" } });
    const [, again] = hitsOf("/blog.atom").slice(-2);
    expect(again).toMatchObject({ status: 304, headers: expect.objectContaining({ "if-modified-since": LAST_MODIFIED }) });
  });

  it("reads RSS 1.0 (RDF), and polls on its timer", async () => {
    const source = await deploy("new-item-in-feed", "rdf on a timer", { url: `${base}/growing.rdf`, timer: { intervalSeconds: 1 } });
    // The feed gains an item at each request: the deploy's read gives item 1, the timer's the next ones.
    const events = await eventually(async () => {
      const list = await eventsIn(source.id);
      return list.length >= 2 ? list : undefined;
    }, 6_000, "items polled by the timer");
    await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });
    expect(events[0].event).toMatchObject({ guid: "http://old.test/1", title: "Item 1", author: "Bob", published: "2026-03-01T00:00:00.000Z", format: "rdf", feed: { title: "Old school" } });
    expect(events[1].event.guid).toBe("http://old.test/2");
  });

  it("logs one line naming a malformed feed and emits nothing", async () => {
    const source = await deploy("new-item-in-feed", "broken", { url: `${base}/broken.xml` });
    expect(await eventsIn(source.id)).toEqual([]);
    const lines = (await logsOf(server, server.adminKey, source.id)).filter((line) => line.includes("broken.xml"));
    expect(lines).toEqual([
      `Feed ${base}/broken.xml could not be read: it is not well-formed XML: Expected closing tag 'item' (opened in line 1, col 15) instead of closing tag 'channel' (line 1, column 43). Nothing was emitted from it.`,
    ]);
  });

  it("refuses a missing or bad URL at deploy, naming the prop", async () => {
    const refused = (configured_props: Record<string, unknown>) =>
      call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: code["new-item-in-feed"], configured_props } });
    const missing = await refused({});
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.field).toBe("configured_props.url");
    const notUrl = await refused({ url: "news feed" });
    expect(notUrl.status).toBe(400);
    expect(notUrl.body.error.message).toContain('Prop "url": "news feed" is not an address');
    const ftp = await refused({ url: "ftp://files.test/feed.xml" });
    expect(ftp.body.error.message).toContain("must start with http:// or https://");
  });
});

describe("rss-new-item-from-multiple-feeds", () => {
  it("emits the items of every readable feed, logs each unreadable one, and dedupes on the next poll", async () => {
    const urls = [`${base}/blog.atom`, `${base}/broken.xml`, `${base}/old.rdf`, `${base}/page.html`, `${base}/gone.xml`, `http://127.0.0.1:${await freePort()}/nobody-listens.xml`];
    const source = await deploy("new-item-from-multiple-feeds", "several", { urls });
    const events = await eventsIn(source.id);
    // Oldest first across feeds: the Atom post (February) before the RDF item (March).
    expect(events.map((e) => [e.event.feed.url, e.event.title])).toEqual([
      [`${base}/blog.atom`, "First post"],
      [`${base}/old.rdf`, "Item 1"],
    ]);
    const logs = await logsOf(server, server.adminKey, source.id);
    const about = (path: string) => logs.filter((line) => line.startsWith(`Feed ${base}${path} could not be read`));
    expect(about("/broken.xml")).toHaveLength(1);
    expect(about("/broken.xml")[0]).toMatch(/not well-formed XML.*Nothing was emitted from it; the other feeds were read\.$/);
    expect(about("/page.html")).toEqual([`Feed ${base}/page.html could not be read: it is XML but not an RSS or Atom feed (its root element is <html>). Nothing was emitted from it; the other feeds were read.`]);
    expect(logs.filter((line) => /\/nobody-listens\.xml could not be read: it could not be fetched \(connect ECONNREFUSED 127\.0\.0\.1:\d+\)\. Nothing/.test(line))).toHaveLength(1);
    expect(about("/gone.xml")).toEqual([`Feed ${base}/gone.xml could not be read: it answered HTTP 404. Nothing was emitted from it; the other feeds were read.`]);

    await runNow(source.id);
    expect(await eventsIn(source.id)).toHaveLength(2);
  });

  it("refuses an empty list or a bad address in it, naming the item", async () => {
    const refused = (urls: unknown) => call(server.url, "POST", "/v1/sources", { key: server.adminKey, json: { component_code: code["new-item-from-multiple-feeds"], configured_props: { urls } } });
    const empty = await refused([]);
    expect(empty.status).toBe(400);
    expect(empty.body.error.message).toContain('Prop "urls" must list at least one feed address.');
    const bad = await refused([`${base}/blog.atom`, "nope"]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('Prop "urls[1]": "nope" is not an address');
  });
});
