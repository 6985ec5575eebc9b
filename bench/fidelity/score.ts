/**
 * Scoring of the fidelity benchmark: absolute percentage error per experiment and metric, and
 * MAPE per split × metric, per model family and per load regime.
 */
import type { Experiment, Measured } from "./experiment.js";
import type { Predicted } from "./simulate.js";

export const METRICS = [
  { key: "ttftMeanMs", label: "TTFT mean" },
  { key: "ttftP99Ms", label: "TTFT p99" },
  { key: "itlMeanMs", label: "ITL mean" },
  { key: "e2eMeanMs", label: "E2E mean" },
  { key: "e2eP99Ms", label: "E2E p99" },
  { key: "outputThroughputTokS", label: "out tok/s" },
] as const satisfies readonly { key: keyof Measured; label: string }[];

export type MetricKey = (typeof METRICS)[number]["key"];

export interface ExperimentResult {
  readonly id: string;
  readonly source: string;
  readonly split: Experiment["split"];
  readonly family: string;
  readonly kind: Experiment["kind"];
  readonly regime: Experiment["load"]["regime"];
  readonly gpu: string;
  readonly measured: Measured;
  readonly predicted: Predicted;
  /** |predicted − measured| / measured × 100 per metric (null where either side is missing). */
  readonly ape: Readonly<Record<MetricKey, number | null>>;
  /**
   * fleetsim queued far more than the hardware did: TTFT mean > 3× measured and > 1 s, or its
   * saturation flag is up (every benchmark run held on hardware).
   */
  readonly collapsed: boolean;
}

function ape(p: number | null, m: number | null): number | null {
  if (p === null || m === null || !Number.isFinite(p) || !Number.isFinite(m) || m <= 0) return null;
  return (Math.abs(p - m) / m) * 100;
}

export function score(e: Experiment, predicted: Predicted): ExperimentResult {
  const errors = {} as Record<MetricKey, number | null>;
  for (const { key } of METRICS) errors[key] = ape(predicted[key], e.measured[key]);
  if (e.vllm.outputStreaming === "multi-token-chunks") {
    // The client timed ~10-token chunks, not tokens: its ITL is per chunk, so the per-token
    // figure to compare is TPOT (per request, (E2E − TTFT) / (n − 1)) on both sides.
    errors.itlMeanMs = ape(predicted.tpotMeanMs, e.measured.tpotMeanMs);
  }
  const pt = predicted.ttftMeanMs ?? 0;
  const mt = e.measured.ttftMeanMs ?? Number.POSITIVE_INFINITY;
  return {
    id: e.id,
    source: e.source.name,
    split: e.split,
    family: e.family,
    kind: e.kind,
    regime: e.load.regime,
    gpu: e.gpu,
    measured: e.measured,
    predicted,
    ape: errors,
    collapsed: (pt > 3 * mt && pt > 1000) || predicted.saturated,
  };
}

export interface GroupScore {
  readonly group: string;
  readonly experiments: number;
  /** MAPE per metric over the group's experiments that have the metric (null when none). */
  readonly mape: Readonly<Record<MetricKey, number | null>>;
}

export function groupScore(group: string, results: readonly ExperimentResult[]): GroupScore {
  const mape = {} as Record<MetricKey, number | null>;
  for (const { key } of METRICS) {
    const xs = results.map((r) => r.ape[key]).filter((x): x is number => x !== null);
    mape[key] = xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
  }
  return { group, experiments: results.length, mape };
}

/** Groups by split, then split × family, split × regime, split × kind. */
export function breakdown(results: readonly ExperimentResult[]): GroupScore[] {
  const out: GroupScore[] = [];
  const by = (label: string, f: (r: ExperimentResult) => string): void => {
    const keys = [...new Set(results.map(f))].sort();
    for (const k of keys)
      out.push(
        groupScore(
          `${label}${k}`,
          results.filter((r) => f(r) === k),
        ),
      );
  };
  by("", (r) => r.split);
  by("", (r) => `${r.split} · ${r.source}`);
  by("", (r) => `${r.split} · ${r.kind}`);
  by("", (r) => `${r.split} · ${r.family}`);
  by("", (r) => `${r.split} · ${r.regime}`);
  return out;
}
