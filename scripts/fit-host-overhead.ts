/**
 * Fits the host overhead of passes without async scheduling (src/timing/hostOverhead.ts,
 * docs/timing.md "Host overhead") on the fidelity benchmark's FIT split only: the closed-loop
 * runs (fixed lengths, steady batch = concurrency) of modern vLLM whose server ran without async
 * scheduling. Each is replayed with no host overhead; the ITL residual (measured − predicted) is
 * regressed on the concurrency, d = a + b·c (least squares), giving a per-pass and a per-sequence
 * term. Then every such run is replayed with the fit to show the effect.
 *
 * Usage: node --import tsx scripts/fit-host-overhead.ts
 */
import { loadExperiments } from "../bench/fidelity/experiment.js";
import { score } from "../bench/fidelity/score.js";
import { simulate } from "../bench/fidelity/simulate.js";

const runs = loadExperiments().filter(
  (e) =>
    e.split === "fit" &&
    (e.workload.closedLoopConcurrency ?? 0) > 0 &&
    e.vllm.asyncScheduling !== true &&
    e.measured.itlMeanMs !== null,
);
if (runs.length < 3) throw new Error(`only ${runs.length} fit runs qualify`);

const overrides = (perPassMs: number, perSequenceMs: number) => ({
  workerOverrides: {
    timing: { type: "default", host_overhead: { per_pass_ms: perPassMs, per_sequence_ms: perSequenceMs } },
  },
});

const xs: number[] = [];
const ys: number[] = [];
for (const e of runs) {
  const p = await simulate(e, overrides(0, 0));
  xs.push(e.workload.closedLoopConcurrency!);
  ys.push(e.measured.itlMeanMs! - (p.itlMeanMs ?? Number.NaN));
}
const n = xs.length;
const mx = xs.reduce((a, b) => a + b, 0) / n;
const my = ys.reduce((a, b) => a + b, 0) / n;
let sxy = 0;
let sxx = 0;
for (let i = 0; i < n; i++) {
  sxy += (xs[i] - mx) * (ys[i] - my);
  sxx += (xs[i] - mx) ** 2;
}
// Unconstrained least squares; a negative intercept is not a cost, so then fit through the origin.
let b = sxy / sxx;
let a = my - b * mx;
console.log(`unconstrained: a = ${a.toFixed(3)} ms, b = ${(b * 1000).toFixed(1)} µs`);
if (a < 0) {
  let sxy0 = 0;
  let sxx0 = 0;
  for (let i = 0; i < n; i++) {
    sxy0 += xs[i] * ys[i];
    sxx0 += xs[i] * xs[i];
  }
  a = 0;
  b = Math.max(0, sxy0 / sxx0);
}
console.log(
  `${n} fit runs (closed loop, no async scheduling): ITL residual = ${a.toFixed(3)} ms + ${(b * 1000).toFixed(1)} µs × sequences`,
);

let before = 0;
let after = 0;
for (const e of runs) {
  before += score(e, await simulate(e, overrides(0, 0))).ape.itlMeanMs ?? 0;
  after += score(e, await simulate(e, overrides(a, b))).ape.itlMeanMs ?? 0;
}
console.log(
  `ITL MAPE on those runs: ${(before / n).toFixed(1)} % without host overhead → ${(after / n).toFixed(1)} % with the fit`,
);
