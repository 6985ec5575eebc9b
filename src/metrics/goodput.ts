/**
 * Per-request goodput rule (`ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs` `SlaThresholds::is_good`, `ai-dynamo/aisimulate@6ef5000:crates/core/src/replay/report.rs`).
 *
 * A completed request is good when every threshold that is set holds, bounds inclusive:
 * - `e2e ≤ e2eMs`;
 * - `ttft ≤ ttftMs`;
 * - `(e2e − ttft)/(outputLength − 1) ≤ itlMs` (AIPerf/genai-perf average ITL), checked only when
 *   `outputLength > 1`; a one-token request skips the ITL check.
 *
 * Zero-output completed requests have no first or last token, so TTFT, E2E and the average ITL
 * are all undefined for them (the collector passes `null`). The reference says they are good
 * "only under an e2e-only SLA"; fleetsim reads that as:
 * - any TTFT or ITL threshold set ⇒ not good (an undefined TTFT cannot be shown to meet the
 *   bound, and the ITL rule needs a first token; its "skip when n ≤ 1" clause is for one-token
 *   requests only);
 * - otherwise (an e2e-only SLA; `e2e_ms` is mutually exclusive with ttft/itl in the config) ⇒ good
 *   when the supplied e2e meets the bound, and good when no e2e is supplied — the request emitted no
 *   token, so it has no token latency that could exceed the bound.
 * A request that did emit tokens but is passed without a TTFT/E2E value fails any threshold that
 * needs the missing value. NaN fails every comparison.
 */

export interface SlaThresholds {
  readonly ttftMs: number | null;
  readonly itlMs: number | null;
  readonly e2eMs: number | null;
}

/** True when at least one threshold is set (goodput keys are reported only then). */
export function hasSla(sla: SlaThresholds | null | undefined): sla is SlaThresholds {
  return sla != null && (sla.ttftMs != null || sla.itlMs != null || sla.e2eMs != null);
}

export function isGood(
  sla: SlaThresholds,
  ttftMs: number | null | undefined,
  e2eMs: number | null | undefined,
  outputLength: number,
): boolean {
  if (outputLength <= 0) {
    if (sla.ttftMs != null || sla.itlMs != null) return false;
    return sla.e2eMs == null || e2eMs == null || e2eMs <= sla.e2eMs;
  }
  if (sla.e2eMs != null && !(e2eMs != null && e2eMs <= sla.e2eMs)) return false;
  if (sla.ttftMs != null && !(ttftMs != null && ttftMs <= sla.ttftMs)) return false;
  if (sla.itlMs != null && outputLength > 1) {
    if (ttftMs == null || e2eMs == null) return false;
    if (!((e2eMs - ttftMs) / (outputLength - 1) <= sla.itlMs)) return false;
  }
  return true;
}
