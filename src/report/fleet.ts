/**
 * Fleet-level facts of a prediction (docs/metrics.md "Fleet block"): GPU-hours, goodput, SLA
 * attainment, scaling events, peak and mean provisioned GPUs, the GPU budget and whether the run
 * was saturated. Read from the prediction document alone (summary, run, planner, timeseries), so
 * `predict`'s console block and the HTML report of any prediction.json agree. Pure.
 */
import { judgeSaturation } from "../metrics/saturation.js";
import type { LifecycleOperation } from "../output/planner.js";
import type { Prediction } from "../output/prediction.js";
import type { ReadPrediction } from "../output/read.js";
import type { Tolerant } from "../output/tolerant.js";

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
  /**
   * How long workers stayed provisioned after the last completion (the run's end − `duration_ms`),
   * when that inflates `meanGpus` past `peakGpus`; else null.
   */
  provisionedAfterLastMs: number | null;
  /** The Planner's `max_num_gpus`; null without a Planner or without a ceiling. */
  budget: number | null;
  overBudget: OverBudget | null;
  saturation: Saturation | null;
  gpuSteps: GpuSteps | null;
  /** Arrived requests that did not complete (rejected, timed out, or unfinished when the run stopped). */
  notCompleted: number | null;
  /** Of those, abandoned by their client (`timed_out_requests`, docs/client.md); null when not reported. */
  timedOut: number | null;
  /** The calibration profile the run applied (`run.client.profile`, docs/calibrate.md); null when none. */
  calibration: { profile: string; requestMs: number } | null;
  /** What the run cost (docs/cost.md); null when the file has no cost keys. */
  cost: { usd: number; perMillionOutputTokens: number | null; perGoodRequest: number | null } | null;
  /**
   * Each distinct GPU system of the run and what its timing rests on (docs/perf-tables.md
   * "Derived systems"), in role order; empty when the file does not say (older files).
   */
  hardware: HardwareFact[];
  /** The host KV tier's work (docs/offload.md); null without one. */
  kvOffload: { loads: number; loadedTokens: number; meanLoadMs: number; evicted: number } | null;
  /** The disk KV tier's work (docs/offload.md "Disk tier"); null without one. */
  diskOffload: { reads: number; readBytes: number; hits: number; probes: number; resident: number } | null;
}

export interface HardwareFact {
  gpu: string;
  tier: "calibrated" | "estimated";
  basis: string;
}

type Doc = ReadPrediction;

function calibrationOf(doc: ReadPrediction): FleetFacts["calibration"] {
  const c = doc.run?.client;
  return c?.profile === undefined || c.request_ms === undefined
    ? null
    : { profile: c.profile, requestMs: c.request_ms };
}

/**
 * The facts of a document fleetsim just built: it is an instance of the reading type as written
 * (readonly arrays aside), so it is read as it is, not parsed through the tolerant schema (which
 * cost a twentieth of a seed run's CPU on its Planner ticks; docs/performance.md).
 */
export function fleetFactsOfPrediction(prediction: Prediction): FleetFacts {
  return fleetFactsOf(prediction as unknown as ReadPrediction);
}

/**
 * The facts of a document read through the contract's tolerant schema (src/output/read.ts
 * `predictionReadSchema`: a file, or an older fleetsim's document).
 */
export function fleetFactsOf(doc: ReadPrediction): FleetFacts {
  const s = doc.summary ?? {};
  const num = (k: string): number | null => s[k] ?? null;
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
    provisionedAfterLastMs:
      peak !== null &&
      gpuHours !== null &&
      durationMs !== null &&
      durationMs > 0 &&
      gpuHours / (durationMs / 3.6e6) > peak.gpus * (1 + 1e-9) &&
      endMs(doc) > durationMs
        ? endMs(doc) - durationMs
        : null,
    budget,
    overBudget: steps === null || budget === null ? null : overBudgetOf(steps, budget, endMs(doc)),
    saturation: saturationOf(doc),
    gpuSteps: steps,
    notCompleted: notCompletedOf(num("num_requests"), num("completed_requests")),
    timedOut: num("timed_out_requests"),
    calibration: calibrationOf(doc),
    cost:
      num("cost_usd") === null
        ? null
        : {
            usd: num("cost_usd") as number,
            perMillionOutputTokens: num("cost_per_million_output_tokens_usd"),
            perGoodRequest: num("cost_per_good_request_usd"),
          },
    hardware: hardwareOf(doc),
    kvOffload: kvOffloadOf(doc),
    diskOffload: diskOffloadOf(doc),
  };
}

function diskOffloadOf(doc: Doc): FleetFacts["diskOffload"] {
  const g = doc.g3_offload;
  const read = g?.read;
  if (read?.submitted_jobs === undefined || read.completed_bytes === undefined) return null;
  return {
    reads: read.submitted_jobs,
    readBytes: read.completed_bytes,
    hits: g?.lookup_hits ?? 0,
    probes: g?.lookup_probes ?? 0,
    resident: g?.resident_blocks ?? 0,
  };
}

function kvOffloadOf(doc: Doc): FleetFacts["kvOffload"] {
  const k = doc.kv_offload;
  if (k?.loads === undefined || k.loaded_tokens === undefined || k.mean_load_ms === undefined) return null;
  return {
    loads: k.loads,
    loadedTokens: k.loaded_tokens,
    meanLoadMs: k.mean_load_ms,
    evicted: k.evicted_blocks ?? 0,
  };
}

function hardwareOf(doc: Doc): HardwareFact[] {
  const out: HardwareFact[] = [];
  const topology = doc.run?.topology;
  for (const role of [topology?.aggregated, topology?.prefill, topology?.decode]) {
    const gpu = role?.hardware;
    const data = role?.hardware_data;
    if (gpu === undefined || data?.tier === undefined || data.basis === undefined) continue;
    if (out.some((h) => h.gpu === gpu)) continue;
    out.push({ gpu, tier: data.tier, basis: data.basis });
  }
  return out;
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
  const s = doc.summary ?? {};
  const topology = doc.run?.topology ?? null;
  const disagg =
    topology !== null
      ? topology.prefill !== undefined
      : (s["prefill_gpus_per_worker"] ?? 0) > 0 || (s["prefill_worker_seconds"] ?? 0) > 0;
  const names: RoleGpus["role"][] = disagg ? ["prefill", "decode"] : ["aggregated"];
  return names.map((role) => {
    const t = topology?.[role];
    // Aggregated workers report under decode_* in the summary (architecture.md).
    const summaryGpw = s[role === "prefill" ? "prefill_gpus_per_worker" : "decode_gpus_per_worker"] ?? null;
    return {
      pool: role === "aggregated" ? "agg" : role,
      role,
      replicas: t === undefined ? null : (t.replicas ?? null),
      gpusPerWorker: t?.gpus_per_worker ?? summaryGpw ?? 1,
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
  const planner = doc.planner ?? null;
  const captured = doc.coverage?.capture_planner_details !== false;
  const known = rs.every((r) => r.replicas !== null);
  if (known && planner === null) {
    return {
      atMs: [0],
      gpus: [rs.reduce((g, r) => g + (r.replicas ?? 0) * r.gpusPerWorker, 0)],
      source: "fixed",
    };
  }
  const lifecycle = planner?.lifecycle_operations;
  if (known && captured && lifecycle !== undefined) return lifecycleSteps(rs, lifecycle);
  return timeseriesSteps(doc, rs);
}

function lifecycleSteps(rs: RoleGpus[], lifecycle: readonly Tolerant<LifecycleOperation>[]): GpuSteps {
  const count = new Map(rs.map((r) => [r.pool, r.replicas ?? 0]));
  const gpw = new Map(rs.map((r) => [r.pool, r.gpusPerWorker]));
  const total = (): number => rs.reduce((g, r) => g + (count.get(r.pool) ?? 0) * r.gpusPerWorker, 0);
  const steps: GpuSteps = { atMs: [0], gpus: [total()], source: "lifecycle" };
  for (const o of lifecycle) {
    const { at_ms: at, pool } = o;
    if (at === undefined || pool === undefined || !gpw.has(pool)) continue;
    let n = count.get(pool) ?? 0;
    for (const tr of o.transitions ?? []) {
      const kind = tr.transition;
      if (kind === "worker_starting" || (kind === "worker_ready" && o.cause === "scale_up")) n++;
      else if (kind === "worker_removed") n--;
    }
    count.set(pool, n);
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
  const tMs = doc.timeseries?.t_ms;
  if (tMs === undefined || tMs.length === 0) return null;
  const gpus = new Array<number>(tMs.length).fill(0);
  let any = false;
  for (const w of doc.timeseries?.workers ?? []) {
    const role = rs.find((x) => x.role === w.role);
    const queue = w.queue_depth;
    if (role === undefined || queue === undefined || queue.length !== tMs.length) continue;
    any = true;
    queue.forEach((q, k) => {
      if (q !== null) gpus[k] += role.gpusPerWorker;
    });
  }
  return any ? { atMs: [...tMs], gpus, source: "timeseries" } : null;
}

function peakOf(steps: GpuSteps): { gpus: number; atMs: number } {
  let best = 0;
  for (let i = 1; i < steps.gpus.length; i++) if (steps.gpus[i] > steps.gpus[best]) best = i;
  return { gpus: steps.gpus[best], atMs: steps.atMs[best] };
}

/** The run's end on the virtual clock: the time series' last bucket end, else duration_ms. */
function endMs(doc: Doc): number {
  const tMs = doc.timeseries?.t_ms;
  const interval = doc.timeseries?.interval_ms;
  const duration = doc.summary?.["duration_ms"] ?? 0;
  if (tMs !== undefined && tMs.length > 0 && interval !== undefined)
    return Math.max(duration, tMs[tMs.length - 1]);
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
  const planner = doc.run?.planner ?? null;
  if (planner !== null) return planner.max_num_gpus ?? null;
  const b = doc.planner?.metadata?.planner_config?.max_gpu_budget ?? null;
  return b === null || b < 0 ? null : b;
}

// ---------------------------------------------------------------------------------------------
// Scaling, SLA, saturation

function scalingCounts(doc: Doc): FleetFacts["scaling"] {
  const planner = doc.planner ?? null;
  if (planner === null) return null;
  let up = 0;
  let down = 0;
  for (const e of planner.scaling_events ?? []) {
    const { from_count: from, to_count: to } = e;
    if (from === undefined || to === undefined) continue;
    if (to > from) up++;
    else down++;
  }
  const recommended = planner.recommended_scaling_events;
  return { total: up + down, up, down, recommended: recommended === undefined ? null : recommended.length };
}

function slaText(doc: Doc): string | null {
  const sla = doc.run?.sla ?? null;
  if (sla === null) return null;
  const parts = (
    [
      [sla.ttft_ms, "TTFT"],
      [sla.itl_ms, "ITL"],
      [sla.e2e_ms, "E2E"],
    ] as const
  ).flatMap(([v, label]) => (v === undefined ? [] : [`${label} ≤ ${v} ms`]));
  return parts.length === 0 ? null : parts.join(", ");
}

/**
 * Saturated = the backlog still grows at the end of the arrival period (src/metrics/saturation.ts,
 * docs/metrics.md "Saturation"). Read from the summary's `saturated` keys; a prediction.json
 * written before they existed is judged from its `timeseries` (arrivals against completions).
 */
export function saturationOf(doc: Doc): Saturation | null {
  const s = doc.summary ?? {};
  const flag = s["saturated"];
  if (flag !== undefined) {
    if (flag !== 1) return null;
    return {
      windowMs: s["saturation_window_ms"] ?? 0,
      growth: s["saturation_backlog_growth"] ?? 0,
      backlogAtLastArrival: s["backlog_at_last_arrival"] ?? 0,
    };
  }
  const ts = doc.timeseries;
  const interval = ts?.interval_ms;
  const tMs = ts?.t_ms;
  const arrivals = ts?.arrivals;
  const completions = ts?.completions;
  if (
    interval === undefined ||
    tMs === undefined ||
    arrivals === undefined ||
    completions === undefined ||
    arrivals.length !== tMs.length ||
    completions.length !== tMs.length
  ) {
    return null;
  }
  const j = judgeSaturation(interval, [...arrivals], [...completions]);
  return j.saturated
    ? { windowMs: j.windowMs, growth: j.growth, backlogAtLastArrival: j.backlogAtLastArrival }
    : null;
}
