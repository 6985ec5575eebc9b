/**
 * Engine time outside the GPU kernels, per pass (docs/timing.md, "Host overhead"): scheduling,
 * input preparation, sampling and output processing, which the silicon op tables do not measure.
 * It grows with the sequences in the pass (per-request work in the scheduler and the output
 * path). With vLLM's async scheduling the CPU prepares pass N+1 while pass N runs on the GPU,
 * so this time is hidden; without it, it is added to every pass.
 */

export interface HostOverhead {
  /** Fixed time per non-empty pass, ms. */
  readonly perPassMs: number;
  /** Time per sequence (prefilling or decoding) in the pass, ms. */
  readonly perSequenceMs: number;
}

/**
 * Without async scheduling: 54 µs per sequence in the pass and no fixed term, fitted on the
 * fidelity benchmark's fit split only (75 closed-loop runs of vLLM 0.11–0.12 on H100 and B200,
 * AIConfigurator's silicon table, source S9; `node --import tsx scripts/fit-host-overhead.ts`:
 * ITL residual = −0.18 ms + 56.2 µs × sequences unconstrained, 53.8 µs through the origin; ITL
 * MAPE on those runs 12.5 % → 8.9 %). It replaced the 0.126 ms per-step constant of the BLIS fit
 * (`inference-sim/inference-sim@2968ed1:docs/blog/posts/how-blis-learns-latency.md`), which did not grow with the batch.
 */
export const SYNC_HOST_OVERHEAD: HostOverhead = { perPassMs: 0, perSequenceMs: 0.054 };

/** With async scheduling the host work overlaps the previous pass's kernels. */
export const ASYNC_HOST_OVERHEAD: HostOverhead = { perPassMs: 0, perSequenceMs: 0 };

/** The host overhead of a role: explicit `timing.host_overhead` fields win over the defaults. */
export function resolveHostOverhead(
  configured: { readonly perPassMs: number | null; readonly perSequenceMs: number | null },
  asyncScheduling: boolean,
): HostOverhead {
  const base = asyncScheduling ? ASYNC_HOST_OVERHEAD : SYNC_HOST_OVERHEAD;
  return {
    perPassMs: configured.perPassMs ?? base.perPassMs,
    perSequenceMs: configured.perSequenceMs ?? base.perSequenceMs,
  };
}
