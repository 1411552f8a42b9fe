import type { ReactNode } from "react";

/** A list or page with nothing in it yet: says so, and what to do (`children`, e.g. a link to create one). */
export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty-state">
      <p className="empty-state-title">{title}</p>
      {children ? <div className="empty-state-body">{children}</div> : null}
    </div>
  );
}
