/**
 * `fleetsim sweep merge` (docs/sweep.md "Merging"): the results of a sweep directory, in plan
 * order, as
 *
 * - `sweep.csv`: one row per point — its index, hash and axis values, its rank and score, and the
 *   headline metrics;
 * - recommend's files (`recommendation.json`, `recommendation.csv`, `recommendations/NNNN.yaml`),
 *   built by recommend's own writer (recommend/result.ts) with each point as a candidate and ranked
 *   by recommend's scoring under the sweep file's `optimization` section;
 * - `compare.html`: `fleetsim compare`'s page over the best-ranked points.
 *
 * Everything is a function of the manifest and the result files (read in index order, every key
 * sorted, no host time, no absolute path of the sweep directory), so a sweep run in parallel merges
 * to the same bytes as one run point after point. Only `<hash>.json` files of planned points are
 * read: temporaries of killed workers and results of other plans are never looked at.
 */
import { join, relative, resolve } from "node:path";
import type { Mapping } from "../config/mapping.js";
import type { SlaSpec } from "../config/runSpec.js";
import { readYamlSource } from "../config/yamlSource.js";
import { predictionReadSchema } from "../output/read.js";
import { type CandidateRecord, replayMetrics } from "../recommend/evaluate.js";
import { buildResult, csvCell, type RankedRow } from "../recommend/result.js";
import { type ScoreSettings, scoreCandidate } from "../recommend/score.js";
import { type CompareRun, compareRows } from "../report/compare.js";
import { fleetFactsOf } from "../report/fleet.js";
import { readReportModel } from "../report/html/model.js";
import type { OutputFile } from "../report/outputDir.js";
import { UserError } from "../util/userError.js";
import { type Manifest, readManifest } from "./manifest.js";
import { pointDocument } from "./point.js";
import { type PointResult, readResult } from "./results.js";

/** Results are missing or unreadable (exit 2): the sweep has not finished, or a file was damaged. */
export class SweepIncomplete extends UserError {}

export interface MergeOptions {
  readonly dir: string;
  readonly outDir: string;
  readonly version: string;
  /** Merge the points that have results and list the others, instead of refusing. */
  readonly allowMissing: boolean;
  /** How many of the best-ranked points the comparison page overlays. */
  readonly compareTop: number;
}

/** What a merge wrote (the files, the ranked rows) and how many points it had or lacked. */
export interface MergeOutcome {
  readonly files: readonly OutputFile[];
  readonly rows: readonly RankedRow[];
  readonly points: number;
  readonly missing: readonly number[];
}

/** The headline metrics of sweep.csv, after the axes (summary keys, docs/metrics.md). */
const TABLE_METRICS = [
  "completed_requests",
  "output_throughput_tok_s",
  "request_throughput_rps",
  "goodput_request_throughput_rps",
  "mean_ttft_ms",
  "p99_ttft_ms",
  "mean_itl_ms",
  "p99_itl_ms",
  "mean_e2e_latency_ms",
  "gpu_hours",
  "cost_usd",
] as const;

export async function mergeSweep(opts: MergeOptions): Promise<MergeOutcome> {
  const manifest = readManifest(opts.dir, opts.version);
  const results: (PointResult | null)[] = [];
  const missing: number[] = [];
  const damaged: string[] = [];
  for (const point of manifest.points) {
    const r = readResult(opts.dir, point.hash);
    if (r.ok) results.push(r.result);
    else {
      results.push(null);
      missing.push(point.index);
      if (!r.missing) damaged.push(`results/${point.hash}.json (point ${point.index}): ${r.problem}`);
    }
  }
  if (damaged.length > 0) {
    throw new SweepIncomplete(
      `${opts.dir}: ${damaged.length} result file${damaged.length === 1 ? " is" : "s are"} not a complete result; ` +
        `fleetsim sweep run ${opts.dir} runs ${damaged.length === 1 ? "that point" : "those points"} again:\n  ${damaged.join("\n  ")}`,
    );
  }
  if (missing.length > 0 && !opts.allowMissing) {
    throw new SweepIncomplete(
      `${missing.length} of ${manifest.points.length} points have no result yet: ${indexRanges(missing)}; ` +
        `run them (fleetsim sweep run ${opts.dir} [--index I]) or pass --allow-missing`,
    );
  }

  const basePath = join(opts.dir, manifest.base.file);
  const base = readYamlSource(basePath);
  const records: CandidateRecord[] = [];
  let sla: SlaSpec | null = null;
  const present = manifest.points.filter((p) => results[p.index] !== null);
  for (const point of present) {
    const result = results[point.index] as PointResult;
    const prediction = predictionReadSchema().parse(result.prediction);
    const run = prediction.run as
      | { mode?: string; starting_gpus?: number; sla?: Record<string, number> | null }
      | undefined;
    const pointSla = slaOf(run?.sla ?? null);
    sla ??= pointSla;
    const score: ScoreSettings = scoreSettings(manifest, pointSla);
    const metrics = replayMetrics(prediction.summary ?? {});
    const usedGpus = run?.starting_gpus ?? 0;
    // Provisioned over the run: an autoscaled point's GPUs are not its starting ones.
    const fleet = fleetFactsOf(prediction);
    const scored = scoreCandidate(score, metrics, usedGpus);
    const doc = pointDocument(
      basePath,
      base,
      point.set.map((s) => ({ ...s, origin: s.path })),
    ).data;
    const common = {
      id: candidateId(point.index),
      usedGpus,
      peakGpus: fleet.peakGpus,
      meanGpus: fleet.meanGpus,
      metrics,
      config: { ...point.values },
      suggestion: { ...point.values },
      predictionConfig: doc as Mapping,
      spec: null,
      study: (run?.mode === "disaggregated" ? "disaggregated" : "aggregated") as CandidateRecord["study"],
      trial: point.index + 1,
    };
    records.push(
      "status" in scored
        ? {
            ...common,
            status: scored.status,
            category: scored.category,
            reason: scored.reason,
            score: null,
            objectives: null,
            outcome: null,
          }
        : {
            ...common,
            status: "feasible",
            category: null,
            reason: null,
            score: scored.score,
            objectives: scored.objectives,
            outcome: scored.outcome,
          },
    );
  }
  const score = scoreSettings(manifest, sla);
  const result = buildResult({
    records,
    cacheHits: 0,
    score,
    // The points' relative paths (copied traces) are relative to the base's copy.
    configDir: resolve(opts.dir, manifest.base.file, ".."),
    outputDir: opts.outDir,
    provenance: {
      search_strategy: "grid",
      implementation: "fleetsim",
      implementation_version: opts.version,
      run_id: `sweep-${manifest.manifest_hash.slice(0, 12)}`,
      input_fingerprint: `sha256:${manifest.manifest_hash}`,
      sweep: { stack: manifest.stack, axes: manifest.axes, points: manifest.points.length, missing },
      optimization: manifest.optimization,
    },
  });
  const rankOf = new Map<string, number>();
  const selected =
    score.target === "pareto" ? result.document.views.pareto_front : result.document.views.top_n;
  for (const [i, id] of selected.entries()) rankOf.set(id, i + 1);

  const files: OutputFile[] = [
    { name: "sweep.csv", chunks: tableChunks(manifest, results, result.document.candidates, rankOf) },
    ...result.files,
  ];
  const page = await comparePage(manifest, results, selected, opts);
  if (page !== null) files.push({ name: "compare.html", chunks: [page] });
  return { files, rows: result.rows, points: manifest.points.length, missing };
}

function scoreSettings(manifest: Manifest, sla: SlaSpec | null): ScoreSettings {
  const o = manifest.optimization;
  return { target: o.target, strictSla: o.strict_sla, sla, minGoodputRps: o.constraints.min_goodput_rps };
}

function slaOf(sla: Record<string, number> | null): SlaSpec | null {
  if (sla === null) return null;
  const v = (k: string): number | null => (typeof sla[k] === "number" ? sla[k] : null);
  return { ttftMs: v("ttft_ms"), itlMs: v("itl_ms"), e2eMs: v("e2e_ms") };
}

function* tableChunks(
  manifest: Manifest,
  results: readonly (PointResult | null)[],
  candidates: readonly {
    candidate_id: string;
    status: string;
    score: number | null;
    used_gpus: number | null;
    peak_gpus: number | null;
    mean_gpus: number | null;
  }[],
  rankOf: ReadonlyMap<string, number>,
): Generator<string> {
  const axes = manifest.axes.map((a) => a.path);
  const header = [
    "index",
    "point_hash",
    ...axes,
    "status",
    "rank",
    "score",
    "used_gpus",
    "peak_gpus",
    "mean_gpus",
    ...TABLE_METRICS,
  ];
  yield `${header.map(csvCell).join(",")}\n`;
  const byId = new Map(candidates.map((c) => [c.candidate_id, c]));
  for (const point of manifest.points) {
    const id = candidateId(point.index);
    const c = byId.get(id);
    const result = results[point.index];
    const summary = (result?.prediction["summary"] ?? {}) as Record<string, number | undefined>;
    const cells = [
      String(point.index),
      point.hash,
      ...axes.map((a) => {
        const v = point.values[a];
        return typeof v === "string" ? v : JSON.stringify(v);
      }),
      c === undefined ? "missing" : c.status,
      rankOf.has(id) ? String(rankOf.get(id)) : "",
      c?.score === null || c?.score === undefined ? "" : String(c.score),
      c?.used_gpus === null || c?.used_gpus === undefined ? "" : String(c.used_gpus),
      c?.peak_gpus === null || c?.peak_gpus === undefined ? "" : String(c.peak_gpus),
      c?.mean_gpus === null || c?.mean_gpus === undefined ? "" : String(c.mean_gpus),
      ...TABLE_METRICS.map((k) => (summary[k] === undefined ? "" : String(summary[k]))),
    ];
    yield `${cells.map(csvCell).join(",")}\n`;
  }
}

/** `fleetsim compare`'s page over the best-ranked points (or the first ones when none ranks). */
async function comparePage(
  manifest: Manifest,
  results: readonly (PointResult | null)[],
  selected: readonly string[],
  opts: MergeOptions,
): Promise<string | null> {
  const ranked = selected.map((id) => Number(id.slice("candidate-".length)));
  const order =
    ranked.length > 0 ? ranked : manifest.points.filter((p) => results[p.index] !== null).map((p) => p.index);
  const shown = order.slice(0, Math.max(0, opts.compareTop));
  if (shown.length === 0) return null;
  const runs: CompareRun[] = shown.map((index, i) => {
    const point = manifest.points[index];
    const values = manifest.axes.map(
      (a) => `${a.path.split(".").pop()}=${JSON.stringify(point.values[a.path])}`,
    );
    return {
      label: `${ranked.length > 0 ? `#${i + 1} ` : ""}point ${index}${values.length > 0 ? ` (${values.join(", ")})` : ""}`,
      path: relative(opts.dir, join(opts.dir, "results", `${point.hash}.json`)),
      model: readReportModel((results[index] as PointResult).prediction),
    };
  });
  const { renderComparePage } = await import("../report/html/compare.js");
  return renderComparePage(runs, compareRows(runs), opts.version);
}

/** `2, 5-7, 9`: sorted indices as ranges. */
export function indexRanges(indices: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < indices.length; ) {
    let j = i;
    while (j + 1 < indices.length && indices[j + 1] === indices[j] + 1) j++;
    parts.push(i === j ? String(indices[i]) : `${indices[i]}-${indices[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}

/** A point's candidate id in recommend's files: `candidate-` and its index (0-based, as in the plan). */
export function candidateId(index: number): string {
  return `candidate-${String(index).padStart(6, "0")}`;
}
