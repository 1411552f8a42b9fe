import { ApiError } from "../api/client";

/** What went wrong, in the API's own words: a failed request, or any other error. Announced to screen readers. */
export function ErrorMessage({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof ApiError && error.status !== 0 ? error.code : null;
  return (
    <div className="error-message" role="alert">
      {title ? <strong>{title} </strong> : null}
      <span>{message}</span>
      {code ? <span className="error-code"> ({code})</span> : null}
    </div>
  );
}
