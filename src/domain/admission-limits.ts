/** How many endpoint requests may wait for their runs at once: in all, and of one owner (see engine/sources/endpoint-admission.ts). */
export interface AdmissionLimits {
  /** RUNNEL_MAX_PENDING_REQUESTS. */
  total: number;
  /** RUNNEL_MAX_PENDING_REQUESTS_PER_OWNER. */
  perOwner: number;
}

/**
 * About three seconds of this machine kind's peak in all, and a quarter of
 * that for one account: far above a busy day's backlog, far below what
 * would exhaust memory (each waiting request holds its body, up to 512 KB).
 */
export const DEFAULT_ADMISSION_LIMITS: AdmissionLimits = { total: 8_192, perOwner: 2_048 };
