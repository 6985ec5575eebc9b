/**
 * The recommendation's files (`ai-dynamo/aisimulate@ea68be2:python/aisimulate/src/aisimulate/recommend.py`): recommendation.json (the ledger, counts, views,
 * provenance; src/output/recommendation.ts), recommendation.csv (one row per candidate, nested
 * fields as canonical JSON cells) and recommendations/NNNN.yaml (the selected candidates' concrete
 * predict inputs in rank order), plus the stdout ranking.
 */
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { stringify } from "yaml";
import type { Mapping } from "../config/mapping.js";
import { getOwn, isMapping } from "../config/mapping.js";
import {
  type CandidateRecordDocument,
  RECOMMENDATION_CSV_COLUMNS,
  type RecommendationDocument,
} from "../output/recommendation.js";
import { stableLine, stableStringify } from "../report/json.js";
import type { OutputFile } from "../report/outputDir.js";
import { type CandidateRecord, topologyOf } from "./evaluate.js";
import { paretoFront, rank, type ScoreSettings } from "./score.js";

export const RECOMMENDATIONS_DIR = "recommendations";

export interface ResultInput {
  readonly records: readonly CandidateRecord[];
  readonly cacheHits: number;
  readonly score: ScoreSettings;
  /** Run provenance: strategy, input config and fingerprint, optimizer settings, studies. */
  readonly provenance: Record<string, unknown>;
  /** Directory of the recommendation input: relative trace paths in it are relative to this. */
  readonly configDir: string;
  readonly outputDir: string;
}

/** One selected configuration, as the stdout ranking shows it. */
export interface RankedRow {
  readonly rank: number;
  readonly score: number;
  readonly objectives: Readonly<Record<string, number>> | null;
  readonly used_gpus: number;
  /** Provisioned over the replay (fleetsim extension): the most at once and the time average. */
  readonly peak_gpus: number | null;
  readonly mean_gpus: number | null;
  readonly config_path: string;
}

export interface RecommendationResult {
  readonly document: RecommendationDocument;
  readonly rows: readonly RankedRow[];
  readonly files: readonly OutputFile[];
}

export function buildResult(input: ResultInput): RecommendationResult {
  const { records, score } = input;
  const recDir = join(input.outputDir, RECOMMENDATIONS_DIR);
  const portable = (doc: Mapping | null): Mapping | null =>
    doc === null ? null : portablePaths(doc, input.configDir, resolve(recDir));

  const feasible = records
    .filter((r) => r.status === "feasible")
    .map((r) => ({
      id: r.id,
      score: r.score ?? 0,
      usedGpus: r.usedGpus ?? 0,
      objectives: r.objectives,
      metrics: r.metrics,
      r,
    }));
  const selected = score.target === "pareto" ? paretoFront(feasible) : rank(score.target, feasible);
  const ids = selected.map((s) => s.id);

  const candidates: CandidateRecordDocument[] = records.map((r) => ({
    candidate_id: r.id,
    status: r.status,
    config: { ...r.config },
    prediction_config: portable(r.predictionConfig),
    used_gpus: r.usedGpus,
    peak_gpus: r.peakGpus,
    mean_gpus: r.meanGpus,
    score: r.score,
    metrics: { ...r.metrics },
    objectives: r.objectives === null ? null : { ...r.objectives },
    reason_category: r.category,
    reason: r.reason,
    provenance: candidateProvenance(r, score),
  }));
  const count = (s: CandidateRecord["status"]): number => records.filter((r) => r.status === s).length;
  const counts = {
    evaluated: count("feasible") + count("infeasible") + count("timed_out") + count("failed"),
    feasible: count("feasible"),
    infeasible: count("infeasible"),
    unsupported: count("unsupported"),
    timed_out: count("timed_out"),
    failed: count("failed"),
    resource_limited: count("resource_limited"),
    cache_hits: input.cacheHits,
    trials: records.length + input.cacheHits,
  };
  const document: RecommendationDocument = {
    schema_version: "1.1",
    candidate_retention: "all",
    counts,
    candidates,
    views: score.target === "pareto" ? { top_n: [], pareto_front: ids } : { top_n: ids, pareto_front: [] },
    provenance: input.provenance,
  };

  const files: OutputFile[] = [
    { name: "recommendation.json", chunks: [stableStringify(document), "\n"] },
    { name: "recommendation.csv", chunks: csvChunks(document) },
  ];
  const rows: RankedRow[] = [];
  selected.forEach((s, i) => {
    const name = `${String(i + 1).padStart(4, "0")}.yaml`;
    const doc = portable(s.r.predictionConfig) ?? {};
    files.push({
      name: `${RECOMMENDATIONS_DIR}/${name}`,
      chunks: [yamlFile(doc, s.r, i + 1, selected.length)],
    });
    rows.push({
      rank: i + 1,
      score: s.score,
      objectives: s.objectives,
      used_gpus: s.usedGpus,
      peak_gpus: s.r.peakGpus,
      mean_gpus: s.r.meanGpus,
      config_path: join(recDir, name),
    });
  });
  return { document, rows, files };
}

function candidateProvenance(r: CandidateRecord, score: ScoreSettings): Record<string, unknown> {
  const doc = r.predictionConfig ?? {};
  const engine = getOwn(doc, "engine");
  const traffic = getOwn(doc, "traffic");
  const e = isMapping(engine) ? engine : {};
  const t = isMapping(traffic) ? traffic : {};
  return {
    model: e["model"] ?? null,
    hardware: e["hardware"] ?? null,
    backend: e["backend"] ?? "vllm",
    backend_version: e["backend_version"] ?? null,
    topology: r.spec === null ? {} : topologyOf(r.spec),
    workload: { source: sourceSummary(t["source"]), load: t["load"] ?? null, stop: t["stop"] ?? null },
    objective: { target: score.target, strict_sla: score.strictSla },
    sla:
      score.sla === null
        ? null
        : { ttft_ms: score.sla.ttftMs, itl_ms: score.sla.itlMs, e2e_ms: score.sla.e2eMs },
    study: r.study,
    trial: r.trial,
    suggestion: { ...r.suggestion },
  };
}

/** The source without its file paths (they depend on where the run was started). */
function sourceSummary(source: unknown): unknown {
  if (!isMapping(source)) return source ?? null;
  const { paths: _paths, ...rest } = source;
  return rest;
}

/**
 * The candidate's document with the paths predict resolves against the config's folder
 * (`traffic.source.paths`, `engine.perf_database`) rewritten relative to recommendations/, so each
 * NNNN.yaml runs as it lies there.
 */
function portablePaths(doc: Mapping, configDir: string, recDir: string): Mapping {
  const out = structuredClone(doc);
  const move = (p: unknown): unknown => {
    if (typeof p !== "string" || p === "") return p;
    const abs = isAbsolute(p) ? p : resolve(configDir, p);
    // Relative where the two share a folder below the root, else absolute (/tmp/out vs /home/x).
    const top = (x: string): string => x.split(sep)[1] ?? "";
    return top(abs) === top(recDir) ? relative(recDir, abs) || "." : abs;
  };
  const traffic = getOwn(out, "traffic");
  const source = isMapping(traffic) ? getOwn(traffic, "source") : undefined;
  if (isMapping(source) && Array.isArray(source["paths"])) source["paths"] = source["paths"].map(move);
  const engine = getOwn(out, "engine");
  if (isMapping(engine) && typeof engine["perf_database"] === "string") {
    engine["perf_database"] = move(engine["perf_database"]);
  }
  return out;
}

function yamlFile(doc: Mapping, r: CandidateRecord, rankNo: number, of: number): string {
  const header =
    `# fleetsim recommendation ${rankNo} of ${of}: ${r.id} (score ${formatG(r.score ?? 0)}, ` +
    `${r.usedGpus} GPU${r.usedGpus === 1 ? "" : "s"}).\n# Run it: fleetsim predict -c <this file> --output-dir <dir>\n`;
  return header + stringify(doc, { lineWidth: 0 });
}

function* csvChunks(doc: RecommendationDocument): Generator<string> {
  yield `${RECOMMENDATION_CSV_COLUMNS.join(",")}\n`;
  const topN = new Set(doc.views.top_n);
  const pareto = new Set(doc.views.pareto_front);
  for (const c of doc.candidates) {
    const cells: Record<(typeof RECOMMENDATION_CSV_COLUMNS)[number], string> = {
      schema_version: doc.schema_version,
      candidate_id: c.candidate_id,
      status: c.status,
      reason_category: c.reason_category ?? "",
      reason: c.reason ?? "",
      used_gpus: c.used_gpus === null ? "" : String(c.used_gpus),
      score: c.score === null ? "" : String(c.score),
      config_json: stableLine(c.config),
      prediction_config_json: c.prediction_config === null ? "" : stableLine(c.prediction_config),
      metrics_json: stableLine(c.metrics),
      objectives_json: c.objectives === null ? "" : stableLine(c.objectives),
      provenance_json: stableLine(c.provenance),
      is_top_n: topN.has(c.candidate_id) ? "true" : "false",
      is_pareto: pareto.has(c.candidate_id) ? "true" : "false",
      peak_gpus: c.peak_gpus === null ? "" : String(c.peak_gpus),
      mean_gpus: c.mean_gpus === null ? "" : String(c.mean_gpus),
    };
    yield `${RECOMMENDATION_CSV_COLUMNS.map((k) => csvCell(cells[k])).join(",")}\n`;
  }
}

/** RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled. */
export function csvCell(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Python's `format(x, ".4g")`: 4 significant digits, exponent form outside [1e-4, 1e4). */
export function formatG(x: number, digits = 4): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const exp = Math.floor(Math.log10(Math.abs(Number(x.toPrecision(digits)))));
  if (exp < -4 || exp >= digits) {
    const [mantissa, e] = x.toExponential(digits - 1).split("e");
    const m = mantissa.includes(".") ? mantissa.replace(/0+$/, "").replace(/\.$/, "") : mantissa;
    const n = Number(e);
    return `${m}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
  }
  const fixed = x.toFixed(Math.max(0, digits - 1 - exp));
  return fixed.includes(".") ? fixed.replace(/0+$/, "").replace(/\.$/, "") : fixed;
}

/** The stdout ranking (the reference's `format_recommendation_stdout`). */
export function renderRanking(rows: readonly RankedRow[], format: "table" | "json"): string {
  if (format === "json") return stableLine(rows);
  if (rows.length === 0) return "No feasible candidate found.";
  const lines = ["fleetsim recommendations"];
  for (const row of rows) {
    const objective = row.objectives ?? { score: row.score };
    const metrics = Object.entries(objective)
      .map(([k, v]) => `${k}=${formatG(v)}`)
      .join(", ");
    // An autoscaled candidate's provisioned GPUs differ from its starting ones: say so.
    const provisioned =
      row.peak_gpus !== null &&
      row.mean_gpus !== null &&
      (row.peak_gpus !== row.used_gpus || Math.abs(row.mean_gpus - row.used_gpus) > 1e-6 * row.used_gpus)
        ? ` peak_gpus=${row.peak_gpus} mean_gpus=${formatG(row.mean_gpus)}`
        : "";
    lines.push(`${row.rank}: ${metrics} used_gpus=${row.used_gpus}${provisioned} config=${row.config_path}`);
  }
  return lines.join("\n");
}
