/**
 * Whether this process should get traffic: it has started serving its role,
 * is not stopping, its store answers and has every migration this release
 * knows. /readyz reports it; a stop turns it unready before the listener
 * closes (see start-server.ts), so that a load balancer stops sending first.
 */
import type { ReadinessState } from "../api/routes/readiness.js";
import type { Store } from "../store/store.js";

type Phase = "starting" | "serving" | "stopping";

/** A queue that does not answer in this long is not ready (a Redis client holds commands while it reconnects: for ever). */
const QUEUE_PING_MS = 2_000;

export class Readiness {
  private phase: Phase = "starting";

  /** `queue`: a shared job queue (RUNNEL_QUEUE=redis|postgres), which must answer too; null when the store is the queue. */
  constructor(
    private readonly store: Store,
    private readonly queue: { kind: string; ping(): Promise<void> } | null = null,
  ) {}

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
    if (this.queue) {
      try {
        await withinMs(this.queue.ping(), QUEUE_PING_MS);
      } catch (error) {
        const where = this.queue.kind === "redis" ? "Redis (REDIS_URL)" : "PostgreSQL (DATABASE_URL)";
        return { ready: false, reason: `the job queue on ${where} does not answer: ${error instanceof Error ? error.message : String(error)}` };
      }
    }
    return { ready: true };
  }
}

async function withinMs(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
