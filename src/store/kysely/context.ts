import type { Kysely } from "kysely";
import type { OneTrip, TripSession } from "../postgres/one-trip.js";
import type { Database } from "./schema.js";

/** What every group of queries is built from; the adapters supply it. */
export interface QueryContext {
  db: Kysely<Database>;
  /** Tells a unique-constraint violation from other driver errors (the codes differ by dialect). */
  isUniqueViolation: (error: unknown) => boolean;
  /** PostgreSQL: several statements sent as one message (one-trip.ts), where a hot path has no use for answers in between. */
  oneTrip?: OneTrip;
  /** PostgreSQL: one connection held for a transaction sent in a few such messages (append-in-two-trips.ts). */
  tripSession?: TripSession;
}
