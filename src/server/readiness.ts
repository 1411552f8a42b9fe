/**
 * Whether this process should get traffic: it has started serving its role,
 * is not stopping, its store answers and has every migration this release
 * knows. /readyz reports it; a stop turns it unready before the listener
 * closes (see start-server.ts), so that a load balancer stops sending first.
 */
import type { ReadinessState } from "../api/routes/readiness.js";
import type { Store } from "../store/store.js";

type Phase = "starting" | "serving" | "stopping";

export class Readiness {
  private phase: Phase = "starting";

  constructor(private readonly store: Store) {}

  /** The process listens and runs its role's work. */
  serving(): void {
    if (this.phase === "starting") this.phase = "serving";
  }

  /** A graceful stop began: unready from now on. */
  stopping(): void {
    this.phase = "stopping";
  }

  async check(): Promise<ReadinessState> {
    if (this.phase === "starting") return { ready: false, reason: "starting up" };
    if (this.phase === "stopping") return { ready: false, reason: "shutting down" };
    let pending: string[];
    try {
      // One query: it proves the store answers and reads its migrations.
      pending = await this.store.pendingMigrations();
    } catch (error) {
      return { ready: false, reason: `the store does not answer: ${error instanceof Error ? error.message : String(error)}` };
    }
    if (pending.length > 0) return { ready: false, reason: `the database lacks migrations this release needs (${pending.join(", ")}); restart this process so it applies them` };
    return { ready: true };
  }
}
