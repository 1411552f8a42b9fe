import { useQuery } from "@tanstack/react-query";
import { useState, type KeyboardEvent } from "react";
import { ErrorMessage } from "../../components/ErrorMessage";
import { Loading } from "../../components/Loading";
import { publishedSourceKeys, searchSourceKeys } from "./api";

/** Finds a source in your registry: every published source key, or those matching words. */
export function RegistrySearch({ onPick }: { onPick: (key: string) => void }) {
  const [typed, setTyped] = useState("");
  const [query, setQuery] = useState("");
  const keys = useQuery({
    queryKey: ["registry-source-keys", query],
    queryFn: ({ signal }) => (query ? searchSourceKeys(query, signal) : publishedSourceKeys(signal)),
  });
  const onKey = (event: KeyboardEvent<HTMLInputElement>) => {
    // Enter searches here; it must not load the component (the form around this).
    if (event.key === "Enter") {
      event.preventDefault();
      setQuery(typed.trim());
    }
  };
  return (
    <div className="registry-search">
      <div className="async-options-search">
        <input type="search" aria-label="Search your registry" placeholder="Search your registry, like: new issue" value={typed} onChange={(event) => setTyped(event.target.value)} onKeyDown={onKey} />
        <button type="button" onClick={() => setQuery(typed.trim())}>
          Search
        </button>
      </div>
      {keys.isPending ? <Loading label="Reading the registry…" /> : null}
      {keys.isError ? <ErrorMessage error={keys.error} title="The registry could not be read." /> : null}
      {keys.isSuccess && keys.data.length === 0 ? (
        <p className="muted">{query ? `No published source matches "${query}".` : "No sources published yet: runnel publish <file> adds one."}</p>
      ) : null}
      {keys.isSuccess && keys.data.length > 0 ? (
        <ul className="registry-keys" aria-label={query ? "Matching sources" : "Published sources"}>
          {keys.data.slice(0, 50).map((key) => (
            <li key={key}>
              <button type="button" className="link-button" onClick={() => onPick(key)} aria-label={`Use ${key}`}>
                {key}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
