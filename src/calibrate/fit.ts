/**
 * The client's fixed overhead from measured and engine-side TTFT means (docs/calibrate.md), the
 * same fit as the fidelity benchmark's (bench/fidelity/calibrationReport.ts): the offset c that
 * minimises Σ |engine + c − measured| / measured, i.e. the weighted median of the residuals with
 * weights 1/measured, and never below 0. Pure.
 */
export function fitClientOverheadMs(pairs: ReadonlyArray<{ engine: number; measured: number }>): number {
  const items = pairs
    .filter((p) => p.measured > 0 && Number.isFinite(p.engine))
    .map((p) => ({ d: p.measured - p.engine, w: 1 / p.measured }))
    .sort((a, b) => a.d - b.d);
  const half = items.reduce((a, x) => a + x.w, 0) / 2;
  let acc = 0;
  for (const x of items) {
    acc += x.w;
    if (acc >= half) return Math.max(0, x.d);
  }
  return 0;
}
