import { useState } from "react";

/**
 * A JSON value as a collapsible tree. Every key and value is rendered as text
 * (React escapes it): an event's body is whatever a stranger POSTed.
 */
export function JsonTree({ value, label, defaultExpandedDepth = 1 }: { value: unknown; label?: string; defaultExpandedDepth?: number }) {
  return (
    <div className="json-tree" role="tree" aria-label={label ?? "JSON"}>
      <JsonNode name={null} value={value} depth={0} expandDepth={defaultExpandedDepth} />
    </div>
  );
}

function JsonNode({ name, value, depth, expandDepth }: { name: string | null; value: unknown; depth: number; expandDepth: number }) {
  const [open, setOpen] = useState(depth < expandDepth);
  const isArray = Array.isArray(value);
  const isObject = value !== null && typeof value === "object";
  const keyLabel = name === null ? null : <span className="json-key">{isArrayIndex(name) ? name : JSON.stringify(name)}: </span>;

  if (!isObject) {
    return (
      <div className="json-leaf" role="treeitem" aria-selected={false}>
        {keyLabel}
        <span className={`json-${value === null ? "null" : typeof value}`}>{formatLeaf(value)}</span>
      </div>
    );
  }

  const entries: Array<[string, unknown]> = isArray ? (value as unknown[]).map((item, index) => [String(index), item]) : Object.entries(value as Record<string, unknown>);
  const summary = isArray ? `[${entries.length}]` : `{${entries.length}}`;
  if (entries.length === 0) {
    return (
      <div className="json-leaf" role="treeitem" aria-selected={false}>
        {keyLabel}
        <span className="json-empty">{isArray ? "[]" : "{}"}</span>
      </div>
    );
  }
  return (
    <div className="json-branch" role="treeitem" aria-expanded={open} aria-selected={false}>
      <button type="button" className="json-toggle" onClick={() => setOpen(!open)} aria-label={`${open ? "Collapse" : "Expand"} ${name ?? "value"}`}>
        <span aria-hidden="true">{open ? "▾" : "▸"}</span>
      </button>
      {keyLabel}
      <span className="json-summary">{summary}</span>
      {open ? (
        <div role="group" className="json-children">
          {entries.map(([key, item]) => (
            <JsonNode key={key} name={isArray ? `${key}` : key} value={item} depth={depth + 1} expandDepth={expandDepth} />
          ))}
        </div>
      ) : null}
    </div>
  );
}

function isArrayIndex(name: string): boolean {
  return /^\d+$/.test(name);
}

function formatLeaf(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined) return "undefined";
  return String(value);
}
