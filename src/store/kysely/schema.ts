/**
 * Row types of the tables, as Kysely sees them. Booleans are stored as 0/1
 * integers and times as epoch-millisecond integers, so that one definition
 * serves SQLite and PostgreSQL alike.
 */
export interface Database {
  users: UserRow;
  api_keys: ApiKeyRow;
}

export interface UserRow {
  id: string;
  username: string;
  email: string | null;
  is_admin: number;
  created_at: number;
}

export interface ApiKeyRow {
  id: string;
  owner_id: string;
  name: string;
  hash: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}
