import { CopyButton } from "../../components/CopyButton";

/**
 * A new API key, shown this once: it lives only in the component that
 * created it, so it leaves the DOM (and memory) when dismissed or when the
 * user leaves the page. The API never answers it again.
 */
export function OnceShownSecret({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }) {
  return (
    <div className="once-shown card" role="region" aria-label={title}>
      <p>
        <strong>{title}</strong>: copy it now. It is shown this once; Runnel keeps only a hash of it.
      </p>
      <p className="secret-line">
        <code className="secret-value">{secret}</code> <CopyButton value={secret} label="Copy key" />
      </p>
      <button type="button" onClick={onDone}>
        Done: I stored it
      </button>
    </div>
  );
}
