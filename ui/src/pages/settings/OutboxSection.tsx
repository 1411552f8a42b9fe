import { useState } from "react";
import { api } from "../../api/client";
import type { OutboxMailView } from "../../api/console-types";
import type { Page } from "../../api/types";
import { EmptyState } from "../../components/EmptyState";
import { PagedTable } from "../../components/PagedTable";
import { RelativeTime } from "../../components/RelativeTime";

const STATUS_TEXT: Record<OutboxMailView["status"], string> = { outbox: "not sent", sent: "sent", failed: "failed" };

/** The mails Runnel sent, or tried to, for you (error notices, $.send.email). Shown as text only: a mail's HTML is never rendered. */
export function OutboxSection() {
  const [open, setOpen] = useState<OutboxMailView | null>(null);
  return (
    <section aria-labelledby="outbox-title" className="settings-section">
      <h2 id="outbox-title">Outbox</h2>
      <PagedTable<OutboxMailView>
        queryKey={["outbox"]}
        fetchPage={(params, signal) => api<Page<OutboxMailView>>("GET", "/v1/outbox", { query: { ...params }, signal })}
        caption="Outbox"
        rowKey={(mail) => mail.id}
        refetchInterval={30_000}
        empty={<EmptyState title="No mails yet.">Error notices and $.send.email mails appear here, sent or not.</EmptyState>}
        columns={[
          { header: "When", cell: (mail) => <RelativeTime value={mail.created_at} /> },
          { header: "To", cell: (mail) => mail.to ?? <span className="muted">nobody</span> },
          {
            header: "Subject",
            cell: (mail) => (
              <button type="button" className="link-button" aria-expanded={open?.id === mail.id} onClick={() => setOpen(open?.id === mail.id ? null : mail)}>
                {mail.subject || "(no subject)"}
              </button>
            ),
          },
          { header: "Kind", cell: (mail) => (mail.kind === "error-notification" ? "error notice" : "$.send.email") },
          {
            header: "Status",
            cell: (mail) => (
              <span>
                <span className={`status status-${mail.status}`}>{STATUS_TEXT[mail.status]}</span>
                {mail.error ? <span className="muted"> {mail.error}</span> : null}
              </span>
            ),
          },
        ]}
      />
      {open ? (
        <article className="card mail-view" aria-labelledby="mail-subject">
          <h3 id="mail-subject">{open.subject || "(no subject)"}</h3>
          <p className="muted">
            To {open.to ?? "nobody"}, <RelativeTime value={open.created_at} />
          </p>
          <pre className="mail-text">{open.text}</pre>
          <button type="button" onClick={() => setOpen(null)}>
            Close
          </button>
        </article>
      ) : null}
    </section>
  );
}
