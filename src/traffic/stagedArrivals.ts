/**
 * Piecewise-rate open-loop arrivals (`traffic.load.stages`, docs/traffic.md §Stages): a list of
 * stages, each with a rate and either a duration or a request count, run back to back — the load
 * shape of vLLM's bench ramps, guidellm's and inference-perf's stages. A fleetsim extension.
 *
 * Stage `i` starts at `s_i` (0 for the first) and ends at `e_i = s_{i+1}`:
 * - duration stage (`D` ms, rate `r`): Poisson — arrivals at `s + Exp(1000/r)` gaps while below
 *   `s + D` (the process is memoryless, so restarting at the boundary is exact); constant — at
 *   `s + k·1000/r` for every k ≥ 0 with `k·1000/r < D` (exactly ⌈D·r/1000⌉ arrivals). A rate of 0
 *   is an idle stage. `e = s + D`.
 * - count stage (`n` requests): Poisson — `n` arrivals at cumulative `Exp` gaps from `s`, and
 *   `e` = the last arrival; constant — at `s + k·1000/r`, k < n, and `e = s + n·1000/r`.
 */
import { Prng } from "../util/prng.js";

export interface RateStage {
  /** Arrivals per second during the stage (≥ 0; > 0 for a count stage). */
  readonly requestsPerSecond: number;
  /** Stage length in ms, or null for a count stage. */
  readonly durationMs: number | null;
  /** Arrivals in the stage, or null for a duration stage. */
  readonly requests: number | null;
}

export interface StagedArrivals {
  /** Arrival times in ms, non-decreasing. */
  readonly timestampMs: Float64Array;
  /** `stageEnd[i]`: row index one past the last arrival of stage i. */
  readonly stageEnd: Int32Array;
  /** `stageStartMs[i]`, `stageStartMs[stages]` = the end of the last stage. */
  readonly stageStartMs: Float64Array;
}

/** Upper bound on arrivals a staged load may generate (the table's Int32 indexing). */
export const MAX_STAGED_ARRIVALS = 50_000_000;

export function stagedArrivalTimes(
  stages: readonly RateStage[],
  kind: "poisson" | "constant_rate",
  seed: number,
): StagedArrivals {
  if (stages.length === 0) throw new RangeError("a staged load needs at least one stage");
  const rng = kind === "poisson" ? new Prng(seed) : null;
  let out = new Float64Array(initialCapacity(stages));
  let n = 0;
  const push = (t: number): void => {
    if (n === out.length) {
      if (n >= MAX_STAGED_ARRIVALS) {
        throw new RangeError(`a staged load generates more than ${MAX_STAGED_ARRIVALS} arrivals`);
      }
      const grown = new Float64Array(Math.min(MAX_STAGED_ARRIVALS, out.length * 2));
      grown.set(out);
      out = grown;
    }
    out[n++] = t;
  };
  const stageEnd = new Int32Array(stages.length);
  const stageStartMs = new Float64Array(stages.length + 1);
  let start = 0;
  for (let i = 0; i < stages.length; i++) {
    const st = stages[i];
    const r = st.requestsPerSecond;
    if (!(Number.isFinite(r) && r >= 0)) throw new RangeError(`stage ${i}: bad rate ${r}`);
    stageStartMs[i] = start;
    const gapMs = 1000 / r;
    if (st.durationMs !== null) {
      const D = st.durationMs;
      if (!(Number.isFinite(D) && D > 0)) throw new RangeError(`stage ${i}: bad duration ${D}`);
      const end = start + D;
      if (r > 0) {
        if (rng === null) {
          for (let k = 0; (k * 1000) / r < D; k++) push(start + (k * 1000) / r);
        } else {
          let t = start + rng.nextExponential(gapMs);
          while (t < end) {
            push(t);
            t += rng.nextExponential(gapMs);
          }
        }
      }
      start = end;
    } else {
      const count = st.requests ?? 0;
      if (!(Number.isInteger(count) && count >= 1 && r > 0)) {
        throw new RangeError(`stage ${i}: a count stage needs requests ≥ 1 and a rate > 0`);
      }
      if (rng === null) {
        for (let k = 0; k < count; k++) push(start + (k * 1000) / r);
        start += (count * 1000) / r;
      } else {
        let t = start;
        for (let k = 0; k < count; k++) {
          t += rng.nextExponential(gapMs);
          push(t);
        }
        start = t;
      }
    }
    stageEnd[i] = n;
  }
  stageStartMs[stages.length] = start;
  return { timestampMs: out.slice(0, n), stageEnd, stageStartMs };
}

/** Expected arrivals of the stages (exact for constant rates): sizes buffers and the preflight. */
export function expectedStagedArrivals(stages: readonly RateStage[]): number {
  let total = 0;
  for (const st of stages) {
    total += st.durationMs !== null ? (st.durationMs / 1000) * st.requestsPerSecond : (st.requests ?? 0);
  }
  return total;
}

/** Total length of the stages in ms, count stages at their nominal `n / rate`. */
export function nominalStagedSpanMs(stages: readonly RateStage[]): number {
  let total = 0;
  for (const st of stages) {
    total += st.durationMs ?? ((st.requests ?? 0) * 1000) / st.requestsPerSecond;
  }
  return total;
}

function initialCapacity(stages: readonly RateStage[]): number {
  const expected = expectedStagedArrivals(stages);
  return Math.max(16, Math.min(MAX_STAGED_ARRIVALS, Math.ceil(expected * 1.1 + 64)));
}
