import { existsSync } from "node:fs";
import { startBenchServer } from "./bench-server.js";
import { quantile, type BenchRow } from "./table.js";

/** Debian's Chromium, the only browser the console is measured and tested in (nothing downloads one). */
const CHROMIUM_PATH = "/usr/bin/chromium";
const RATE_PER_SECOND = 100;
const SECONDS = Number(process.env.RUNNEL_BENCH_SECONDS ?? 8);

/** Emits each request as an event whose summary carries its number, so the page can tell which one it shows. */
const SOURCE = `module.exports = { name: "bench inspector", version: "0.1.0", props: { http: { type: "$.interface.http" } },
  run(event) { this.$emit(event.body, { summary: "evt-" + event.body.n }); } };`;

/**
 * Run in the page before the console: notes when each `evt-<n>` line first
 * appears (epoch ms, as the bench stamps its requests), and the page's long
 * tasks. Text, not a function: the server is compiled without the DOM's types.
 */
const PAGE_OBSERVER = `
  const seen = {};
  const longTasks = [];
  window.__benchSeen = seen;
  window.__benchLongTasks = longTasks;
  new PerformanceObserver((list) => list.getEntries().forEach((entry) => longTasks.push(entry.duration))).observe({ type: "longtask", buffered: true });
  new MutationObserver((mutations) => {
    const at = performance.timeOrigin + performance.now();
    for (const mutation of mutations) {
      mutation.addedNodes.forEach((node) => {
        for (const match of (node.textContent || "").matchAll(/evt-(-?\\d+)/g)) if (seen[match[1]] === undefined) seen[match[1]] = at;
      });
    }
  }).observe(document, { childList: true, subtree: true });
`;

/**
 * The console's event inspector under a stream of events: the time from a
 * request to a source's endpoint to its event's line in an open source page
 * (HTTP, the store, SSE, React, the DOM), with RATE_PER_SECOND events a
 * second arriving; and whether the page stays responsive (its longest task
 * on the main thread). Both clocks are this machine's: the bench stamps each
 * request when it sends it, a MutationObserver in the page when a line
 * appears.
 */
export async function benchConsoleInspector(): Promise<BenchRow[]> {
  const benchmark = `console: event to inspector line (SSE to DOM), ${RATE_PER_SECOND} events/s`;
  if (!existsSync(CHROMIUM_PATH)) return [{ benchmark, note: `skipped: ${CHROMIUM_PATH} is missing (apt-get install chromium)` }];
  const { chromium } = await import("playwright-core");
  const bench = await startBenchServer("sqlite");
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    const base = bench.server.url;
    const deployed = await fetch(`${base}/v1/sources`, {
      method: "POST",
      headers: { authorization: `Bearer ${bench.key}`, "content-type": "application/json" },
      body: JSON.stringify({ component_code: SOURCE, name: "inspector bench" }),
    });
    const source = ((await deployed.json()) as { data: { id: string; endpoint_url: string } }).data;
    // The observer is the bench's own script: the console's CSP (no inline scripts) is bypassed for it alone.
    const context = await browser.newContext({ baseURL: base, bypassCSP: true });
    const signIn = await context.request.post("/v1/sessions", { data: { api_key: bench.key }, headers: { origin: base } });
    if (!signIn.ok()) throw new Error(`the bench could not sign in: ${signIn.status()} ${await signIn.text()}`);
    const page = await context.newPage();
    await page.addInitScript({ content: PAGE_OBSERVER });
    await page.goto(`/sources/${source.id}`);
    await page.getByRole("heading", { level: 1 }).waitFor();
    // The stream is open once a first event shows; it is not counted.
    await send(source.endpoint_url, -1);
    await page.getByText("evt--1").first().waitFor({ timeout: 20_000 });

    const sentAt = new Map<number, number>();
    const total = RATE_PER_SECOND * SECONDS;
    const started = Date.now();
    const inFlight: Array<Promise<void>> = [];
    for (let n = 0; n < total; n++) {
      // An even stream: each request at its own time, whatever the earlier ones took.
      const due = started + (n * 1000) / RATE_PER_SECOND;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      sentAt.set(n, Date.now());
      inFlight.push(send(source.endpoint_url, n));
    }
    await Promise.all(inFlight);
    // Give the last lines time to arrive.
    await page.getByText(`evt-${total - 1}`).first().waitFor({ timeout: 20_000 }).catch(() => undefined);
    const { seen, longTasks } = (await page.evaluate("({ seen: window.__benchSeen, longTasks: window.__benchLongTasks })")) as { seen: Record<string, number>; longTasks: number[] };
    const latencies = [...sentAt].flatMap(([n, at]) => (seen[String(n)] === undefined ? [] : [seen[String(n)]! - at])).sort((a, b) => a - b);
    const missing = total - latencies.length;
    const longest = longTasks.length > 0 ? Math.max(...longTasks) : 0;
    return [
      {
        benchmark,
        perSecond: RATE_PER_SECOND,
        p50Ms: quantile(latencies, 0.5),
        p99Ms: quantile(latencies, 0.99),
        note: `target p50 < 100 ms; ${latencies.length} of ${total} events shown (${missing} never appeared); page's long tasks: ${longTasks.length}, longest ${longest.toFixed(0)} ms`,
      },
    ];
  } finally {
    await browser.close().catch(() => undefined);
    await bench.close();
  }
}

async function send(url: string, n: number): Promise<void> {
  const answer = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n }) });
  await answer.arrayBuffer();
}
