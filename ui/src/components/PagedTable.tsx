import { keepPreviousData, useQuery, type QueryKey } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import type { Page, PageParams } from "../api/types";
import { EmptyState } from "./EmptyState";
import { ErrorMessage } from "./ErrorMessage";
import { Loading } from "./Loading";

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** Narrow columns (actions, flags) keep their width. */
  className?: string;
  /** Shown only when this says so of the page's rows (a field not every server version answers). */
  showIf?: (rows: T[]) => boolean;
}

export interface PagedTableProps<T> {
  /** The query's key; the page's cursor is added to it. */
  queryKey: QueryKey;
  /** One page of the list: the API's cursor paging (`limit`, `after`, `before`). */
  fetchPage: (params: PageParams, signal: AbortSignal) => Promise<Page<T>>;
  columns: Array<Column<T>>;
  rowKey: (row: T) => string;
  /** What the table is (read to screen readers). */
  caption: string;
  /** Shown when the list has nothing at all (not on an empty later page). */
  empty: ReactNode;
  pageSize?: number;
  /** Refetch every so many ms (lists that change under the user). */
  refetchInterval?: number;
}

/** Where the table is in the list: a cursor to ask from and how many rows come before the page. */
interface Position {
  params: PageParams;
  offset: number;
}

/**
 * A list from the API, page by page (newest first, as the API pages): Next
 * asks `after=<end_cursor>`, Previous `before=<start_cursor>`. Loading, error
 * (with the API's message and a retry) and empty states included.
 */
export function PagedTable<T>({ queryKey, fetchPage, columns, rowKey, caption, empty, pageSize = 20, refetchInterval }: PagedTableProps<T>) {
  const [position, setPosition] = useState<Position>({ params: {}, offset: 0 });
  const query = useQuery({
    queryKey: [...queryKey, "page", pageSize, position.params],
    queryFn: ({ signal }) => fetchPage({ limit: pageSize, ...position.params }, signal),
    placeholderData: keepPreviousData,
    ...(refetchInterval ? { refetchInterval } : {}),
  });

  if (query.isPending) return <Loading label={`Loading ${caption.toLowerCase()}…`} />;
  if (query.isError) {
    return (
      <div>
        <ErrorMessage error={query.error} title={`Could not load ${caption.toLowerCase()}.`} />
        <button type="button" onClick={() => void query.refetch()}>
          Try again
        </button>
      </div>
    );
  }

  const page = query.data;
  const shown = columns.filter((column) => !column.showIf || column.showIf(page.data));
  const { total_count: total, count, start_cursor: start, end_cursor: end } = page.page_info;
  if (total === 0 && position.offset === 0) return <>{empty}</>;
  const hasNext = position.offset + count < total && end !== null;
  const hasPrevious = position.offset > 0 && start !== null;

  return (
    <div className="paged-table">
      <div className="table-scroll">
        <table>
          <caption className="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {shown.map((column) => (
                <th key={column.header} scope="col" className={column.className}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {page.data.map((row) => (
              <tr key={rowKey(row)}>
                {shown.map((column) => (
                  <td key={column.header} className={column.className} data-label={column.header}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {count === 0 ? <EmptyState title="Nothing on this page." /> : null}
      <div className="pager">
        <span className="muted" aria-live="polite">
          {count === 0 ? `0 of ${total}` : `${position.offset + 1}–${position.offset + count} of ${total}`}
          {query.isFetching && !query.isPending ? " (updating…)" : ""}
        </span>
        <button type="button" disabled={!hasPrevious} onClick={() => start && setPosition({ params: { before: start }, offset: Math.max(0, position.offset - pageSize) })}>
          Previous
        </button>
        <button type="button" disabled={!hasNext} onClick={() => end && setPosition({ params: { after: end }, offset: position.offset + count })}>
          Next
        </button>
      </div>
    </div>
  );
}
