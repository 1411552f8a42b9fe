import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../helpers/server.js";
import { deploySource, eventsOf, logsOf } from "../helpers/sources.js";

/** Emits the ids it is sent (`?ids=1,2,3`), so each dedupe rule can be driven from outside. */
function emitter(dedupe: string): string {
  return `module.exports = {
  name: "Dedupe ${dedupe}", version: "1", dedupe: "${dedupe}",
  props: { http: { type: "$.interface.http" } },
  async run(event) {
    for (const part of String(event.query.ids).split(",")) {
      const [id, ts] = part.split("@");
      this.$emit({ id }, { id: /^\\d+$/.test(id) ? Number(id) : id, ...(ts ? { ts: Number(ts) } : {}) });
    }
  },
};`;
}

describe("events", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  const send = (source: { endpoint_url: string }, ids: string) => fetch(`${source.endpoint_url}?ids=${ids}`, { method: "POST" });
  const emitted = async (source: { id: string }) => (await eventsOf(server, server.adminKey, source.id)).map((e) => e.event.id).reverse();

  it("dedupes unique ids, remembering the last 100", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: emitter("unique") });
    await send(source, "1,2,2,3");
    await send(source, "3,4,1");
    expect(await emitted(source)).toEqual(["1", "2", "3", "4"]);
    await send(source, Array.from({ length: 100 }, (_, i) => i + 100).join(","));
    await send(source, "1,150");
    expect((await emitted(source)).slice(-1)).toEqual(["1"]);
  });

  it("dedupes by the greatest numeric id, and logs a non-numeric one", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: emitter("greatest") });
    await send(source, "5,3,7");
    await send(source, "6,7,8");
    expect(await emitted(source)).toEqual(["5", "7", "8"]);
    await send(source, "abc");
    expect((await logsOf(server, server.adminKey, source.id)).join("\n")).toMatch(/not numeric/);
  });

  it("dedupes with last: only what comes after the cached id; all when none matches; newest ts wins", async () => {
    const source = await deploySource(server, server.adminKey, { component_code: emitter("last") });
    await send(source, "a,b,c");
    await send(source, "b,c,d,e");
    expect(await emitted(source)).toEqual(["a", "b", "c", "d", "e"]);
    await send(source, "x,y");
    expect((await emitted(source)).slice(-2)).toEqual(["x", "y"]);
    // With ts, events are emitted oldest first and the cached one is the newest.
    await send(source, "p@300,q@100,r@200");
    expect((await emitted(source)).slice(-3)).toEqual(["q", "r", "p"]);
    await send(source, "q@100,r@200,p@300,s@400");
    expect((await emitted(source)).slice(-1)).toEqual(["s"]);
  });

  it("uses channels, selects them with event_name, and keeps 100 events per channel", async () => {
    const code = `module.exports = { name: "Channels", version: "1", async run() {
      for (let i = 0; i < 120; i++) this.$emit({ i }, { name: i % 2 ? "odd" : undefined, summary: "#" + i });
    } };`;
    const source = await deploySource(server, server.adminKey, { component_code: code });
    await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    const odd = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?event_name=odd&limit=5`, { key: server.adminKey });
    expect(odd.body.page_info.total_count).toBe(100);
    expect(odd.body.data.map((e: any) => e.event.i)).toEqual([119, 117, 115, 113, 111]);
    expect(odd.body.data[0].metadata).toMatchObject({ name: "odd", emitter_id: source.id, summary: "#119" });
    const all = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries`, { key: server.adminKey });
    expect(all.body.page_info.total_count).toBe(200);
    const defaults = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?event_name=`, { key: server.adminKey });
    expect(defaults.body.data[0].metadata.name).toBe("");
  });

  it("pages with exact page_info and cuts big bodies unless expand=event", async () => {
    const code = `module.exports = { name: "Pager", version: "1", async run() {
      for (let i = 0; i < 25; i++) this.$emit({ i, pad: i === 24 ? "x".repeat(2000) : "" });
    } };`;
    const source = await deploySource(server, server.adminKey, { component_code: code });
    await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    const first = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?limit=10`, { key: server.adminKey });
    expect(first.body.page_info).toEqual({ total_count: 25, count: 10, start_cursor: first.body.data[0].id, end_cursor: first.body.data[9].id });
    expect(first.body.data[0].event).toBeUndefined();
    expect(first.body.data[1].event).toEqual({ i: 23, pad: "" });
    const next = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?limit=10&after=${first.body.page_info.end_cursor}`, { key: server.adminKey });
    expect(next.body.data[0].event.i).toBe(14);
    const expanded = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?limit=1&expand=event`, { key: server.adminKey });
    expect(expanded.body.data[0].event.pad).toHaveLength(2000);
    const bad = await call(server.url, "GET", `/v1/sources/${source.id}/event_summaries?after=nonsense`, { key: server.adminKey });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.field).toBe("after");
  });

  it("deletes a range of events, or all, answering 202", async () => {
    const code = `module.exports = { name: "Deleter", version: "1", async run() { for (let i = 0; i < 5; i++) this.$emit({ i }); } };`;
    const source = await deploySource(server, server.adminKey, { component_code: code });
    await call(server.url, "POST", `/v1/sources/${source.id}/run`, { key: server.adminKey, json: {} });
    const events = await eventsOf(server, server.adminKey, source.id);
    const [newest, second, third] = events;
    const ranged = await call(server.url, "DELETE", `/v1/sources/${source.id}/events?start_id=${third.id}&end_id=${second.id}`, { key: server.adminKey });
    expect(ranged.status).toBe(202);
    expect((await eventsOf(server, server.adminKey, source.id)).map((e) => e.event.i)).toEqual([newest.event.i, 1, 0]);
    expect((await call(server.url, "DELETE", `/v1/sources/${source.id}/events`, { key: server.adminKey })).status).toBe(202);
    expect(await eventsOf(server, server.adminKey, source.id)).toEqual([]);
  });

  it("streams events over SSE to a real client, with the channel as the SSE event, and closes when the source is deleted", async () => {
    const source = await deploySource(server, server.adminKey, {
      component_code: `module.exports = { name: "Streamer", version: "1", props: { http: "$.interface.http" }, async run(e) { this.$emit(e.body, { name: e.query.channel }); } };`,
    });
    const response = await fetch(`${server.url}/v1/sources/${source.id}/sse`, { headers: { authorization: `Bearer ${server.adminKey}` } });
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    const reader = response.body!.getReader();
    let text = "";
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      return text;
    };
    await readUntil(/: connected/);
    await fetch(`${source.endpoint_url}?channel=alerts`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' });
    await fetch(source.endpoint_url, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":2}' });
    await readUntil(/"n":2/);
    const messages = text.split("\n\n").filter((block) => block.includes("data: {"));
    expect(messages[0]).toMatch(/^id: \d+-\d+\nevent: alerts\ndata: /m);
    expect(JSON.parse(messages[0]!.split("data: ")[1]!)).toMatchObject({ event: { n: 1 }, metadata: { name: "alerts", emitter_id: source.id } });
    expect(messages[1]).not.toMatch(/event:/);
    await call(server.url, "DELETE", `/v1/sources/${source.id}`, { key: server.adminKey });
    await readUntil(/event: \$closed/);
    expect((await reader.read()).done).toBe(true);
  });
});

describe("deleting the events of one channel", () => {
  let server: TestServer;
  beforeAll(async () => (server = await startTestServer()));
  afterAll(() => server.close());

  it("takes event_name, and leaves the other channels' events", async () => {
    const source = await deploySource(server, server.adminKey, {
      component_code: `module.exports = { name: "channels", version: "0.1.0", props: { http: { type: "$.interface.http" } }, run(e) { this.$emit({ n: e.query.n }, e.query.channel ? { name: e.query.channel } : undefined); } };`,
    });
    for (const [n, channel] of [[1, ""], [2, "alerts"], [3, ""], [4, "alerts"]] as const) await fetch(`${source.endpoint_url}?n=${n}${channel ? `&channel=${channel}` : ""}`, { method: "POST" });
    const deleted = await call(server.url, "DELETE", `/v1/sources/${source.id}/events?event_name=alerts`, { key: server.adminKey });
    expect(deleted).toMatchObject({ status: 202, body: { deleted: 2 } });
    expect((await eventsOf(server, server.adminKey, source.id)).map((event) => event.event.n)).toEqual(["3", "1"]);
    expect((await call(server.url, "DELETE", `/v1/sources/${source.id}/events?event_name=`, { key: server.adminKey })).body).toEqual({ deleted: 2 });
  });
});
