import { EmptyState } from "../components/EmptyState";

/** A section of the console not built yet: says so instead of a blank page. */
export function Placeholder({ title }: { title: string }) {
  return (
    <section aria-labelledby="placeholder-title">
      <h1 id="placeholder-title">{title}</h1>
      <EmptyState title={`${title} are not in the console yet`}>Use the CLI (`runnel --help`) or the API (/v1) meanwhile.</EmptyState>
    </section>
  );
}
