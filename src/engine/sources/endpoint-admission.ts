import { DEFAULT_ADMISSION_LIMITS, type AdmissionLimits } from "../../domain/admission-limits.js";
import { UnavailableError } from "../../domain/errors.js";
import { ChurningMap } from "../../domain/churning-map.js";

/** What a caller turned away is told to wait before sending again. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Admission control for sources' endpoints. Past what the machine can run,
 * requests would otherwise queue without bound: every caller's latency
 * grows to seconds, memory grows with the queue, and one owner's flood
 * (a misbehaving webhook sender, an attack on one endpoint) takes the
 * server from every other owner. A request over either limit is answered
 * at once with 503 and Retry-After, which well-behaved senders (webhook
 * providers, queues) retry; the requests already admitted run as usual,
 * and another owner's requests are still admitted while one owner is at
 * its limit.
 */
export class EndpointAdmission {
  private total = 0;
  private readonly byOwner = new ChurningMap<string, number>();

  constructor(private readonly limits: AdmissionLimits = DEFAULT_ADMISSION_LIMITS) {}

  /**
   * Admits a request of `ownerId`, or throws an UnavailableError saying which
   * limit it met. The returned release must be called once the request is
   * answered (it does nothing the second time).
   */
  admit(ownerId: string): () => void {
    const owned = this.byOwner.get(ownerId) ?? 0;
    if (owned >= this.limits.perOwner) {
      throw new UnavailableError(
        `This account has ${owned} requests to its endpoints in progress, its limit (RUNNEL_MAX_PENDING_REQUESTS_PER_OWNER). Send the request again in a moment; if this load is expected, the server's admin can raise the limit.`,
        RETRY_AFTER_SECONDS,
      );
    }
    if (this.total >= this.limits.total) {
      throw new UnavailableError(
        `The server has ${this.total} requests to endpoints in progress, its limit (RUNNEL_MAX_PENDING_REQUESTS). Send the request again in a moment.`,
        RETRY_AFTER_SECONDS,
      );
    }
    this.total += 1;
    this.byOwner.set(ownerId, owned + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.byOwner.get(ownerId) ?? 1) - 1;
      if (left > 0) this.byOwner.set(ownerId, left);
      else this.byOwner.delete(ownerId);
    };
  }
}
