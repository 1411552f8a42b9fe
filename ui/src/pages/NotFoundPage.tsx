import { Link } from "@tanstack/react-router";

export function NotFoundPage() {
  return (
    <section aria-labelledby="not-found-title">
      <h1 id="not-found-title">No such page</h1>
      <p>
        This address is not a page of the console. Go to <Link to="/">Home</Link>.
      </p>
    </section>
  );
}
