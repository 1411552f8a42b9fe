import { describe, expect, it } from "vitest";
import { sendRecord } from "./send-records.js";

describe("sendRecord", () => {
  it("describes an http send without its auth, header values or query values", () => {
    const record = sendRecord(
      { type: "http", payload: { method: "POST", url: "https://api.example.com/hook?token=secret1", headers: { "x-key": "secret2" }, params: { sig: "secret3" }, auth: { username: "u", password: "secret4" }, data: { n: 1 } } },
      "p_1",
      "pending",
    );
    expect(record).toEqual({ destination: "http", target: "POST https://api.example.com/hook", summary: 'data {"n":1}; headers x-key; query token, sig; basic auth', status: "pending", detail: null });
    expect(JSON.stringify(record)).not.toMatch(/secret/);
  });

  it("names each destination's target and cuts long payloads", () => {
    expect(sendRecord({ type: "email", payload: { subject: "Hi", text: "body" } }, "p_1", "pending")).toMatchObject({ target: "the workflow owner's email address", summary: 'subject "Hi"; "body"' });
    expect(sendRecord({ type: "s3", payload: { bucket: "b", prefix: "logs/", payload: { a: 1 } } }, "p_1", "pending")).toMatchObject({ target: "s3://b/logs/", summary: 'payload {"a":1}' });
    expect(sendRecord({ type: "sse", payload: { channel: "c", payload: 1 } }, "p_1", "pending")).toMatchObject({ target: 'p_1 SSE channel "c"', summary: "payload 1" });
    const long = sendRecord({ type: "emit", payload: { raw_event: "x".repeat(500) } }, "p_1", "pending");
    expect(long.target).toBe("p_1 (default channel)");
    expect(long.summary).toMatch(/^raw_event "x{189}… \(512 characters\)$/);
  });
});
