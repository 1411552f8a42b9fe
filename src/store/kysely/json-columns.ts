/** JSON is kept as text in both dialects, so one schema serves SQLite and PostgreSQL. */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

export function fromJson<T>(text: string | null): T {
  return (text === null ? null : JSON.parse(text)) as T;
}
