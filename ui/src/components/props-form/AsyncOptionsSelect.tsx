import { useInfiniteQuery } from "@tanstack/react-query";
import { useState, type KeyboardEvent } from "react";
import { ErrorMessage } from "../ErrorMessage";
import { encodeOption, optionLabel, optionValue } from "./draft-values";
import type { LoadOptions, OptionsPage, PropOption } from "./types";

export interface AsyncOptionsSelectProps {
  /** The select's id and description, from FormField. */
  id: string;
  describedBy: string | undefined;
  invalid: boolean;
  label: string;
  prop: string;
  /** The component the prop belongs to (its id): part of the cache key. */
  optionsKey: string;
  /** The earlier props' values, passed to the options method; a change loads the options again. */
  earlier: Record<string, unknown>;
  loadOptions: LoadOptions;
  multiple: boolean;
  /** The picked value(s), JSON-encoded (see draft-values.ts). */
  value: string | string[] | undefined;
  onChange: (value: string | string[] | undefined) => void;
  disabled?: boolean | undefined;
}

interface PageParam {
  page: number;
  prevContext: unknown;
}

/**
 * A prop's options from its async `options()` method, through the API: paged
 * ("More options" asks for the next page with `page` and `prevContext`),
 * searchable (the query goes to the method), with the earlier props' values.
 */
export function AsyncOptionsSelect(props: AsyncOptionsSelectProps) {
  const { id, describedBy, invalid, label, prop, optionsKey, earlier, loadOptions, multiple, value, onChange, disabled } = props;
  const [typed, setTyped] = useState("");
  const [query, setQuery] = useState("");
  const options = useInfiniteQuery({
    queryKey: ["prop-options", optionsKey, prop, query, earlier],
    queryFn: ({ pageParam, signal }): Promise<OptionsPage> =>
      loadOptions({ prop, page: pageParam.page, prevContext: pageParam.prevContext, query, configuredProps: earlier }, signal),
    initialPageParam: { page: 0, prevContext: null } as PageParam,
    // A page that brings nothing new is the last: some methods answer every option on every page.
    getNextPageParam: (last, pages): PageParam | undefined => (addsNothing(last, pages) ? undefined : { page: pages.length, prevContext: last.context }),
    retry: false,
    staleTime: 60_000,
  });

  const loaded = uniqueOptions(options.data?.pages ?? []);
  const picked = value === undefined ? [] : Array.isArray(value) ? value : [value];
  // A value given before (a default, a pre-filled form) stays choosable even when no page holds it.
  const missing = picked.filter((encoded) => !loaded.some((option) => encodeOption(optionValue(option)) === encoded));

  const search = () => setQuery(typed.trim());
  const onSearchKey = (event: KeyboardEvent<HTMLInputElement>) => {
    // Enter searches; it must not submit the form the select sits in.
    if (event.key === "Enter") {
      event.preventDefault();
      search();
    }
  };

  return (
    <div className="async-options">
      <div className="async-options-search">
        <input
          type="search"
          aria-label={`Search ${label}`}
          value={typed}
          onChange={(event) => setTyped(event.target.value)}
          onKeyDown={onSearchKey}
          disabled={disabled}
        />
        <button type="button" onClick={search} disabled={disabled}>
          Search
        </button>
      </div>
      <select
        id={id}
        aria-describedby={describedBy}
        aria-invalid={invalid}
        aria-busy={options.isFetching || undefined}
        multiple={multiple}
        disabled={disabled}
        value={multiple ? picked : (picked[0] ?? "")}
        onChange={(event) => {
          if (multiple) onChange(Array.from(event.target.selectedOptions, (option) => option.value));
          else onChange(event.target.value === "" ? undefined : event.target.value);
        }}
      >
        {multiple ? null : <option value="">{options.isPending ? "Loading options…" : "Choose…"}</option>}
        {missing.map((encoded) => (
          <option key={encoded} value={encoded}>
            {encoded}
          </option>
        ))}
        {loaded.map((option) => {
          const encoded = encodeOption(optionValue(option));
          return (
            <option key={encoded} value={encoded}>
              {optionLabel(option)}
            </option>
          );
        })}
      </select>
      <div className="async-options-status">
        {options.isSuccess && loaded.length === 0 ? <span className="muted">{query ? `No options match "${query}".` : "No options."}</span> : null}
        {options.isSuccess && loaded.length > 0 ? <span className="muted">{`${loaded.length} option${loaded.length === 1 ? "" : "s"} loaded`}</span> : null}
        {options.hasNextPage ? (
          <button type="button" onClick={() => void options.fetchNextPage()} disabled={disabled || options.isFetchingNextPage} aria-busy={options.isFetchingNextPage || undefined}>
            {options.isFetchingNextPage ? "Loading more…" : "More options"}
          </button>
        ) : null}
      </div>
      {options.isError ? (
        <div>
          <ErrorMessage error={options.error} title="The options could not be loaded." />
          <button type="button" onClick={() => void options.refetch()}>
            Try again
          </button>
        </div>
      ) : null}
    </div>
  );
}

function uniqueOptions(pages: OptionsPage[]): PropOption[] {
  const seen = new Set<string>();
  const out: PropOption[] = [];
  for (const page of pages) {
    for (const option of page.options) {
      const encoded = encodeOption(optionValue(option));
      if (seen.has(encoded)) continue;
      seen.add(encoded);
      out.push(option);
    }
  }
  return out;
}

function addsNothing(last: OptionsPage, pages: OptionsPage[]): boolean {
  if (last.options.length === 0) return true;
  const before = new Set(pages.slice(0, -1).flatMap((page) => page.options.map((option) => encodeOption(optionValue(option)))));
  return last.options.every((option) => before.has(encodeOption(optionValue(option))));
}
