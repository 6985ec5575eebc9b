/**
 * Fleet-level facts of a prediction (docs/metrics.md "Fleet block"): GPU-hours, goodput, SLA
 * attainment, scaling events, peak and mean provisioned GPUs, the GPU budget and whether the run
 * was saturated. Read from the prediction document alone (summary, run, planner, timeseries), so
 * `predict`'s console block and the HTML report of any prediction.json agree. Pure.
 */
import { judgeSaturation } from "../metrics/saturation.js";
import { finite, type Json, list, nullableNumbers, numbers, record, text } from "./html/read.js";

/** Provisioned GPUs as a step function of virtual time: `gpus[i]` holds from `atMs[i]` on. */
export interface GpuSteps {
  atMs: number[];
  gpus: number[];
  /** `lifecycle`: exact, from the Planner's lifecycle records; `timeseries`: sampled at bucket starts. */
  source: "lifecycle" | "timeseries" | "fixed";
}

export interface OverBudget {
  budget: number;
  peakGpus: number;
  firstAtMs: number;
  /** Virtual time spent above the budget (exact with lifecycle records, in buckets otherwise). */
  durationMs: number;
}

/** The run's backlog (arrived − completed requests) kept growing up to its last arrival. */
export interface Saturation {
  /** Length of the stretch examined: the last quarter of the arrival period. */
  windowMs: number;
  /** Backlog growth over that stretch (least-squares slope × its length). */
  growth: number;
  /** Requests arrived but not completed at the end of the last bucket with arrivals. */
  backlogAtLastArrival: number;
}

export interface FleetFacts {
  gpuHours: number | null;
  /** Per-role split, when the run has prefill workers. */
  prefillGpuHours: number | null;
  decodeGpuHours: number | null;
  goodputRps: number | null;
  goodRequests: number | null;
  numRequests: number | null;
  /** Good requests / arrived requests (null without an SLA). */
  slaAttainment: number | null;
  slaText: string | null;
  /** null without a Planner. */
  scaling: { total: number; up: number; down: number; recommended: number | null } | null;
  peakGpus: number | null;
  peakAtMs: number | null;
  /** gpu_hours / duration: the reference's avg_gpu (the per-GPU scores' denominator). */
  meanGpus: number | null;
  /** The Planner's `max_num_gpus`; null without a Planner or without a ceiling. */
  budget: number | null;
  overBudget: OverBudget | null;
  saturation: Saturation | null;
  gpuSteps: GpuSteps | null;
  /** Arrived requests that did not complete (rejected, timed out, or unfinished when the run stopped). */
  notCompleted: number | null;
  /** Of those, abandoned by their client (`timed_out_requests`, docs/client.md); null when not reported. */
  timedOut: number | null;
}

type Doc = Record<string, Json>;

export function fleetFacts(document: Json): FleetFacts {
  const doc: Doc = record(document) ?? {};
  const s = record(doc["summary"]) ?? {};
  const num = (k: string): number | null => finite(s[k]);
  const gpuHours = num("gpu_hours");
  const durationMs = num("duration_ms");
  const prefillWs = num("prefill_worker_seconds") ?? 0;
  const prefillGpw = num("prefill_gpus_per_worker") ?? 0;
  const decodeWs = num("decode_worker_seconds");
  const decodeGpw = num("decode_gpus_per_worker");
  const disagg = prefillWs > 0 || prefillGpw > 0;
  const good = num("goodput_completed_requests");
  const arrived = num("num_requests");
  const steps = gpuSteps(doc);
  const peak = steps === null ? null : peakOf(steps);
  const budget = budgetOf(doc);
  return {
    gpuHours,
    prefillGpuHours: disagg ? (prefillWs * prefillGpw) / 3600 : null,
    decodeGpuHours: disagg && decodeWs !== null && decodeGpw !== null ? (decodeWs * decodeGpw) / 3600 : null,
    goodputRps: num("goodput_request_throughput_rps"),
    goodRequests: good,
    numRequests: arrived,
    slaAttainment: good !== null && arrived !== null && arrived > 0 ? good / arrived : null,
    slaText: slaText(doc),
    scaling: scalingCounts(doc),
    peakGpus: peak?.gpus ?? null,
    peakAtMs: peak?.atMs ?? null,
    meanGpus:
      gpuHours !== null && durationMs !== null && durationMs > 0 ? gpuHours / (durationMs / 3.6e6) : null,
    budget,
    overBudget: steps === null || budget === null ? null : overBudgetOf(steps, budget, endMs(doc)),
    saturation: saturationOf(doc),
    gpuSteps: steps,
    notCompleted: notCompletedOf(num("num_requests"), num("completed_requests")),
    timedOut: num("timed_out_requests"),
  };
}

function notCompletedOf(arrived: number | null, completed: number | null): number | null {
  return arrived === null || completed === null ? null : arrived - completed;
}

// ---------------------------------------------------------------------------------------------
// Provisioned GPUs

interface RoleGpus {
  /** Lifecycle pool name (`agg`, `prefill`, `decode`) and time-series role. */
  pool: "agg" | "prefill" | "decode";
  role: "aggregated" | "prefill" | "decode";
  replicas: number | null;
  gpusPerWorker: number;
}

function roles(doc: Doc): RoleGpus[] {
  const s = record(doc["summary"]) ?? {};
  const topology = record(record(doc["run"])?.["topology"]);
  const disagg =
    topology !== null
      ? topology["prefill"] !== undefined
      : (finite(s["prefill_gpus_per_worker"]) ?? 0) > 0 || (finite(s["prefill_worker_seconds"]) ?? 0) > 0;
  const names: RoleGpus["role"][] = disagg ? ["prefill", "decode"] : ["aggregated"];
  return names.map((role) => {
    const t = record(topology?.[role]);
    // Aggregated workers report under decode_* in the summary (architecture.md).
    const summaryGpw = finite(s[role === "prefill" ? "prefill_gpus_per_worker" : "decode_gpus_per_worker"]);
    return {
      pool: role === "aggregated" ? "agg" : role,
      role,
      replicas: t === null ? null : finite(t["replicas"]),
      gpusPerWorker: finite(t?.["gpus_per_worker"]) ?? summaryGpw ?? 1,
    };
  });
}

/**
 * Provisioned GPUs over time. Exact from the lifecycle records when the Planner's details were
 * captured (a worker counts from `worker_starting`, or `worker_ready` of a scale-up, until
 * `worker_removed`: starting and draining workers are paid for); constant without a Planner;
 * else sampled from the time series (a worker is provisioned where its series is not null).
 */
export function gpuSteps(doc: Doc): GpuSteps | null {
  const rs = roles(doc);
  const planner = record(doc["planner"]);
  const captured = record(doc["coverage"])?.["capture_planner_details"] !== false;
  const known = rs.every((r) => r.replicas !== null);
  if (known && planner === null) {
    return {
      atMs: [0],
      gpus: [rs.reduce((g, r) => g + (r.replicas ?? 0) * r.gpusPerWorker, 0)],
      source: "fixed",
    };
  }
  const lifecycle = planner === null ? null : planner["lifecycle_operations"];
  if (known && captured && Array.isArray(lifecycle)) return lifecycleSteps(rs, lifecycle);
  return timeseriesSteps(doc, rs);
}

function lifecycleSteps(rs: RoleGpus[], lifecycle: Json[]): GpuSteps {
  const count = new Map(rs.map((r) => [r.pool, r.replicas ?? 0]));
  const gpw = new Map(rs.map((r) => [r.pool, r.gpusPerWorker]));
  const total = (): number => rs.reduce((g, r) => g + (count.get(r.pool) ?? 0) * r.gpusPerWorker, 0);
  const steps: GpuSteps = { atMs: [0], gpus: [total()], source: "lifecycle" };
  for (const op of lifecycle) {
    const o = record(op);
    const at = o === null ? null : finite(o["at_ms"]);
    const pool = o === null ? null : text(o["pool"]);
    if (o === null || at === null || pool === null || !gpw.has(pool as RoleGpus["pool"])) continue;
    const key = pool as RoleGpus["pool"];
    let n = count.get(key) ?? 0;
    for (const tr of list(o["transitions"])) {
      const kind = text(record(tr)?.["transition"]);
      if (kind === "worker_starting" || (kind === "worker_ready" && o["cause"] === "scale_up")) n++;
      else if (kind === "worker_removed") n--;
    }
    count.set(key, n);
    const g = total();
    const last = steps.atMs.length - 1;
    if (steps.atMs[last] === at) steps.gpus[last] = g;
    else if (steps.gpus[last] !== g) {
      steps.atMs.push(at);
      steps.gpus.push(g);
    }
  }
  return steps;
}

function timeseriesSteps(doc: Doc, rs: RoleGpus[]): GpuSteps | null {
  const ts = record(doc["timeseries"]);
  const tMs = ts === null ? null : numbers(ts["t_ms"]);
  if (ts === null || tMs === null || tMs.length === 0) return null;
  const gpus = new Array<number>(tMs.length).fill(0);
  let any = false;
  for (const w of list(ts["workers"])) {
    const r = record(w);
    const role = rs.find((x) => x.role === text(r?.["role"]));
    const queue = r === null ? null : nullableNumbers(r["queue_depth"], tMs.length);
    if (role === undefined || queue === null) continue;
    any = true;
    queue.forEach((q, k) => {
      if (q !== null) gpus[k] += role.gpusPerWorker;
    });
  }
  return any ? { atMs: tMs, gpus, source: "timeseries" } : null;
}

function peakOf(steps: GpuSteps): { gpus: number; atMs: number } {
  let best = 0;
  for (let i = 1; i < steps.gpus.length; i++) if (steps.gpus[i] > steps.gpus[best]) best = i;
  return { gpus: steps.gpus[best], atMs: steps.atMs[best] };
}

/** The run's end on the virtual clock: the time series' last bucket end, else duration_ms. */
function endMs(doc: Doc): number {
  const ts = record(doc["timeseries"]);
  const tMs = ts === null ? null : numbers(ts["t_ms"]);
  const interval = ts === null ? null : finite(ts["interval_ms"]);
  const duration = finite(record(doc["summary"])?.["duration_ms"]) ?? 0;
  if (tMs !== null && tMs.length > 0 && interval !== null) return Math.max(duration, tMs[tMs.length - 1]);
  return duration;
}

function overBudgetOf(steps: GpuSteps, budget: number, end: number): OverBudget | null {
  let firstAtMs: number | null = null;
  let durationMs = 0;
  let peakGpus = 0;
  for (let i = 0; i < steps.gpus.length; i++) {
    if (steps.gpus[i] <= budget) continue;
    const from = steps.atMs[i];
    const to = i + 1 < steps.atMs.length ? steps.atMs[i + 1] : Math.max(end, from);
    if (firstAtMs === null) firstAtMs = from;
    durationMs += to - from;
    peakGpus = Math.max(peakGpus, steps.gpus[i]);
  }
  return firstAtMs === null ? null : { budget, peakGpus, firstAtMs, durationMs };
}

function budgetOf(doc: Doc): number | null {
  const planner = record(record(doc["run"])?.["planner"]);
  if (planner !== null) return finite(planner["max_num_gpus"]);
  const cfg = record(record(record(doc["planner"])?.["metadata"])?.["planner_config"]);
  const b = cfg === null ? null : finite(cfg["max_gpu_budget"]);
  return b === null || b < 0 ? null : b;
}

// ---------------------------------------------------------------------------------------------
// Scaling, SLA, saturation

function scalingCounts(doc: Doc): FleetFacts["scaling"] {
  const planner = record(doc["planner"]);
  if (planner === null) return null;
  let up = 0;
  let down = 0;
  for (const e of list(planner["scaling_events"])) {
    const r = record(e);
    const from = finite(r?.["from_count"]);
    const to = finite(r?.["to_count"]);
    if (from === null || to === null) continue;
    if (to > from) up++;
    else down++;
  }
  const recommended = planner["recommended_scaling_events"];
  return {
    total: up + down,
    up,
    down,
    recommended: Array.isArray(recommended) ? recommended.length : null,
  };
}

function slaText(doc: Doc): string | null {
  const sla = record(record(doc["run"])?.["sla"]);
  if (sla === null) return null;
  const parts = [
    ["ttft_ms", "TTFT"],
    ["itl_ms", "ITL"],
    ["e2e_ms", "E2E"],
  ].flatMap(([key, label]) => {
    const v = finite(sla[key]);
    return v === null ? [] : [`${label} ≤ ${v} ms`];
  });
  return parts.length === 0 ? null : parts.join(", ");
}

/**
 * Saturated = the backlog still grows at the end of the arrival period (src/metrics/saturation.ts,
 * docs/metrics.md "Saturation"). Read from the summary's `saturated` keys; a prediction.json
 * written before they existed is judged from its `timeseries` (arrivals against completions).
 */
export function saturationOf(doc: Doc): Saturation | null {
  const s = record(doc["summary"]) ?? {};
  const flag = finite(s["saturated"]);
  if (flag !== null) {
    if (flag !== 1) return null;
    return {
      windowMs: finite(s["saturation_window_ms"]) ?? 0,
      growth: finite(s["saturation_backlog_growth"]) ?? 0,
      backlogAtLastArrival: finite(s["backlog_at_last_arrival"]) ?? 0,
    };
  }
  const ts = record(doc["timeseries"]);
  if (ts === null) return null;
  const interval = finite(ts["interval_ms"]);
  const tMs = numbers(ts["t_ms"]);
  const arrivals = tMs === null ? null : numbers(ts["arrivals"], tMs.length);
  const completions = tMs === null ? null : numbers(ts["completions"], tMs.length);
  if (interval === null || tMs === null || arrivals === null || completions === null) return null;
  const j = judgeSaturation(interval, arrivals, completions);
  return j.saturated
    ? { windowMs: j.windowMs, growth: j.growth, backlogAtLastArrival: j.backlogAtLastArrival }
    : null;
}
