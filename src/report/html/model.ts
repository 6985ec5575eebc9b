/**
 * What the report shows, read out of a prediction document: run facts, the time series, and the
 * Planner's replicas, scaling events and load predictions. Pure data, no presentation.
 */
import { type FleetFacts, fleetFacts } from "../fleet.js";
import { finite, type Json, list, nullableNumbers, numbers, record, text } from "./read.js";

export type Role = "aggregated" | "prefill" | "decode";
const ROLES: readonly Role[] = ["aggregated", "prefill", "decode"];

export interface Sla {
  ttftMs: number | null;
  itlMs: number | null;
}

export interface WorkerSeries {
  role: Role;
  workerId: number;
  queueDepth: (number | null)[];
  kvUtilization: (number | null)[];
}

/** `prediction.timeseries`, validated (docs/metrics.md "Time series"). */
export interface Timeline {
  intervalMs: number;
  tMs: number[];
  arrivals: number[] | null;
  completions: number[] | null;
  outputTokens: number[] | null;
  ttft: Percentiles | null;
  itl: Percentiles | null;
  activeWorkers: { role: Role; counts: number[] }[];
  workers: WorkerSeries[];
  /** `timeseries.latency`: percentiles in buckets sized to the run; null in older files. */
  latency: LatencyBuckets | null;
}

export interface LatencyBuckets {
  intervalMs: number;
  tMs: number[];
  ttft: Percentiles | null;
  ttftSamples: number[] | null;
  itl: Percentiles | null;
  itlSamples: number[] | null;
}

export interface Percentiles {
  p50: (number | null)[];
  p90: (number | null)[];
  p99: (number | null)[];
}

/** Replica counts of one role at each Planner tick. */
export interface TickReplicas {
  role: Role;
  atMs: number[];
  ready: number[];
  /** Ready + starting + draining: what is paid for (GPU-hours). */
  provisioned: number[];
}

export interface ScalingMark {
  atMs: number;
  role: Role;
  from: number;
  to: number;
  direction: "up" | "down";
}

/** One throughput-scaling tick: the traffic observed over the past window and the prediction for the next. */
export interface LoadWindow {
  atMs: number;
  windowMs: number;
  observed: { requests: number; isl: number | null; osl: number | null };
  predicted: { requests: number | null; isl: number | null; osl: number | null };
  /** Replicas the throughput loop requires per role (its lower bound for load scaling). */
  floors: { role: Role; replicas: number }[];
}

/** One `planner.retune_events` entry (docs/retune.md), as the report's table shows it. */
export interface RetuneRow {
  window: number | null;
  outcome: string;
  reason: string | null;
  windowStartS: number | null;
  windowEndS: number | null;
  decidedAtS: number | null;
  requests: number | null;
  candidates: number | null;
  /**
   * The router parameters of the point chosen (live names, `name=value`), or null when no sweep
   * scored one. Its Planner fields are in `plannerChanges` where they differ from the previous point.
   */
  chosenRouter: string | null;
  /** Planner fields the decision changes (`name=value`). */
  plannerChanges: string;
  baselineScore: number | null;
  bestScore: number | null;
  sweepWallS: number | null;
}

export interface PlannerView {
  mode: "agg" | "disagg";
  advisory: boolean;
  settings: { label: string; value: string }[];
  replicas: TickReplicas[];
  scalingEvents: ScalingMark[];
  recommendedEvents: ScalingMark[];
  load: LoadWindow[];
  totalTicks: number;
  /** Retune decisions; null when the run did not retune (no `retune_events`). */
  retune: RetuneRow[] | null;
}

/** One role of `prediction.run.topology`. */
export interface RunRoleView {
  role: Role;
  replicas: number;
  /** `TP2 · DP4` (only the factors other than 1, TP always). */
  parallelism: string;
  gpusPerWorker: number;
  hardware: string | null;
  timing: string | null;
}

/** `prediction.run` (docs/metrics.md "What was simulated"), or null in files written before it. */
export interface RunView {
  model: string | null;
  hardware: string | null;
  backend: string | null;
  stack: string | null;
  roles: RunRoleView[];
  startingGpus: number | null;
  router: string | null;
  planner: {
    target: string | null;
    /** null = no ceiling. */
    maxGpus: number | null;
    advisory: boolean;
    retuneObjective: string | null;
  } | null;
  traffic: {
    /** `conversation_trace.jsonl` or `synthetic 1024/128 tokens`. */
    source: string;
    requests: number | null;
    load: string | null;
  } | null;
}

export interface ReportModel {
  summary: Record<string, number>;
  /** What was simulated; null for a prediction.json without a `run` block. */
  run: RunView | null;
  /** Provisioned GPUs, budget, scaling, saturation (the fleet block of `predict`, src/report/fleet.ts). */
  fleet: FleetFacts;
  /** Run length in virtual ms (summary.duration_ms, else the time series' span). */
  durationMs: number;
  sla: Sla;
  timeline: Timeline | null;
  planner: PlannerView | null;
  perRequestRecords: number | null;
}

export function readReportModel(doc: Json, slaOverride: Partial<Sla> = {}): ReportModel {
  const root = record(doc) ?? {};
  const summary = readSummary(root["summary"]);
  const timeline = readTimeline(root["timeseries"]);
  const planner = readPlanner(root["planner"]);
  const plannerSla = readPlannerSla(root["planner"]);
  const spanMs = timeline === null ? 0 : timeline.tMs[timeline.tMs.length - 1] + timeline.intervalMs;
  const coverage = record(root["coverage"]);
  return {
    summary,
    run: readRun(root["run"]),
    fleet: fleetFacts(root),
    durationMs: summary["duration_ms"] ?? spanMs,
    sla: {
      ttftMs: slaOverride.ttftMs ?? plannerSla.ttftMs,
      itlMs: slaOverride.itlMs ?? plannerSla.itlMs,
    },
    timeline,
    planner,
    perRequestRecords: coverage === null ? null : finite(coverage["per_request_records"]),
  };
}

function readRun(v: Json): RunView | null {
  const run = record(v);
  if (run === null) return null;
  const topology = record(run["topology"]) ?? {};
  const roles: RunRoleView[] = [];
  for (const role of ROLES) {
    const r = record(topology[role]);
    const replicas = r === null ? null : finite(r["replicas"]);
    if (r === null || replicas === null) continue;
    const factors: string[] = [`TP${finite(r["tensor"]) ?? 1}`];
    for (const [key, label] of [
      ["pipeline", "PP"],
      ["attention_data", "DP"],
      ["moe_tensor", "MoE-TP"],
      ["moe_expert", "EP"],
    ] as const) {
      const n = finite(r[key]);
      if (n !== null && n !== 1) factors.push(`${label}${n}`);
    }
    roles.push({
      role,
      replicas,
      parallelism: factors.join(" · "),
      gpusPerWorker: finite(r["gpus_per_worker"]) ?? 1,
      hardware: text(r["hardware"]),
      timing: text(r["timing"]),
    });
  }
  const router = record(run["router"]);
  const planner = record(run["planner"]);
  const retune = planner === null ? null : record(planner["retune"]);
  const traffic = record(run["traffic"]);
  return {
    model: text(run["model"]),
    hardware: text(run["hardware"]),
    backend: text(run["backend"]),
    stack: text(run["stack"]),
    roles,
    startingGpus: finite(run["starting_gpus"]),
    router: router === null ? null : routerText(router),
    planner:
      planner === null
        ? null
        : {
            target: text(planner["target"]),
            maxGpus: finite(planner["max_num_gpus"]),
            advisory: planner["advisory"] === true,
            retuneObjective: retune === null ? null : text(retune["objective"]),
          },
    traffic: traffic === null ? null : readRunTraffic(traffic),
  };
}

function routerText(r: Record<string, Json>): string | null {
  const policy = text(r["policy"]);
  if (policy !== "kv_router") return policy;
  const parts: string[] = [];
  const add = (label: string, v: Json): void => {
    if (finite(v) !== null || typeof v === "string") parts.push(`${label} ${v}`);
  };
  add("overlap credit", r["overlap_score_credit"]);
  add("prefill load scale", r["prefill_load_scale"]);
  add("temperature", r["temperature"]);
  if (text(r["prefill_load_model"]) === "aic") parts.push("AIC prefill load");
  return parts.length === 0 ? policy : `${policy} (${parts.join(", ")})`;
}

function readRunTraffic(t: Record<string, Json>): NonNullable<RunView["traffic"]> {
  const source = text(t["source"]);
  const files = finite(t["files"]) ?? 1;
  const trace = text(t["trace"]);
  const what =
    source === "synthetic"
      ? `synthetic ${finite(t["input_tokens"]) ?? "?"}/${finite(t["output_tokens"]) ?? "?"} tokens`
      : `${trace ?? "trace"}${files > 1 ? ` (+${files - 1} files)` : ""}${source === null ? "" : ` (${source})`}`;
  const loadType = text(t["load"]);
  let load = loadType;
  if (loadType === "trace_timestamps") {
    const speedup = finite(t["speedup"]);
    load = speedup === null || speedup === 1 ? "trace timestamps" : `trace timestamps ÷ ${speedup}`;
  } else if (loadType === "concurrency") load = `concurrency ${finite(t["concurrency"]) ?? "?"}`;
  else if (loadType !== null) load = `${loadType} ${finite(t["requests_per_second"]) ?? "?"} req/s`;
  return { source: what, requests: finite(t["requests"]), load };
}

function readSummary(v: Json): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(record(v) ?? {})) {
    const n = finite(x);
    if (n !== null) out[k] = n;
  }
  return out;
}

function readTimeline(v: Json): Timeline | null {
  const ts = record(v);
  if (ts === null) return null;
  const intervalMs = finite(ts["interval_ms"]);
  const tMs = numbers(ts["t_ms"]);
  if (intervalMs === null || intervalMs <= 0 || tMs === null || tMs.length === 0) return null;
  const n = tMs.length;
  const active = record(ts["active_workers"]) ?? {};
  const activeWorkers: Timeline["activeWorkers"] = [];
  for (const role of ROLES) {
    const counts = numbers(active[role], n);
    if (counts !== null) activeWorkers.push({ role, counts });
  }
  const workers: WorkerSeries[] = [];
  for (const w of list(ts["workers"])) {
    const r = record(w);
    const role = r === null ? null : roleOf(r["role"]);
    const workerId = r === null ? null : finite(r["worker_id"]);
    if (r === null || role === null || workerId === null) continue;
    const queueDepth = nullableNumbers(r["queue_depth"], n);
    const kvUtilization = nullableNumbers(r["kv_utilization"], n);
    if (queueDepth === null || kvUtilization === null) continue;
    workers.push({ role, workerId, queueDepth, kvUtilization });
  }
  return {
    intervalMs,
    tMs,
    arrivals: numbers(ts["arrivals"], n),
    completions: numbers(ts["completions"], n),
    outputTokens: numbers(ts["output_tokens"], n),
    ttft: readPercentiles(ts["ttft_ms"], n),
    itl: readPercentiles(ts["itl_ms"], n),
    activeWorkers,
    workers,
    latency: readLatency(ts["latency"]),
  };
}

function readLatency(v: Json): LatencyBuckets | null {
  const l = record(v);
  if (l === null) return null;
  const intervalMs = finite(l["interval_ms"]);
  const tMs = numbers(l["t_ms"]);
  if (intervalMs === null || intervalMs <= 0 || tMs === null || tMs.length === 0) return null;
  const n = tMs.length;
  return {
    intervalMs,
    tMs,
    ttft: readPercentiles(l["ttft_ms"], n),
    ttftSamples: numbers(l["ttft_samples"], n),
    itl: readPercentiles(l["itl_ms"], n),
    itlSamples: numbers(l["itl_samples"], n),
  };
}

function readPercentiles(v: Json, n: number): Percentiles | null {
  const p = record(v);
  if (p === null) return null;
  const p50 = nullableNumbers(p["p50"], n);
  const p90 = nullableNumbers(p["p90"], n);
  const p99 = nullableNumbers(p["p99"], n);
  return p50 === null || p90 === null || p99 === null ? null : { p50, p90, p99 };
}

function roleOf(v: Json): Role | null {
  return ROLES.find((r) => r === v) ?? null;
}

function plannerConfig(v: Json): Record<string, Json> {
  return record(record(record(v)?.["metadata"])?.["planner_config"]) ?? {};
}

function readPlannerSla(v: Json): Sla {
  const cfg = plannerConfig(v);
  return { ttftMs: finite(cfg["ttft_ms"]), itlMs: finite(cfg["itl_ms"]) };
}

function readPlanner(v: Json): PlannerView | null {
  const planner = record(v);
  if (planner === null) return null;
  const metadata = record(planner["metadata"]) ?? {};
  const cfg = plannerConfig(v);
  const mode = text(metadata["mode"]) ?? text(cfg["mode"]);
  const disagg = mode === "disagg";
  // Aggregated workers report under the decode role in the Planner's records (architecture.md).
  const decodeRole: Role = disagg ? "decode" : "aggregated";
  const ticks = list(planner["ticks"])
    .map(record)
    .filter((t) => t !== null);
  return {
    mode: disagg ? "disagg" : "agg",
    advisory: metadata["advisory"] === true || cfg["advisory"] === true,
    settings: plannerSettings(cfg),
    replicas: readTickReplicas(ticks, disagg, decodeRole),
    scalingEvents: readScalingEvents(planner["scaling_events"], decodeRole),
    recommendedEvents: readScalingEvents(planner["recommended_scaling_events"], decodeRole),
    load: readLoadWindows(ticks, disagg, decodeRole),
    totalTicks: finite(planner["total_ticks"]) ?? ticks.length,
    retune: Array.isArray(planner["retune_events"]) ? readRetuneRows(planner["retune_events"]) : null,
  };
}

function readRetuneRows(v: Json): RetuneRow[] {
  const out: RetuneRow[] = [];
  for (const e of list(v)) {
    const r = record(e);
    const outcome = r === null ? null : text(r["outcome"]);
    if (r === null || outcome === null) continue;
    const chosen = record(r["chosen"]);
    out.push({
      window: finite(r["window_index"]),
      outcome,
      reason: text(r["reason"]),
      windowStartS: finite(r["window_start_s"]),
      windowEndS: finite(r["window_end_s"]),
      decidedAtS: finite(r["decided_at_s"]),
      requests: finite(r["num_requests"]),
      candidates: finite(r["num_candidates"]),
      chosenRouter: chosen === null ? null : assignments(record(chosen["router"])),
      plannerChanges: assignments(record(r["planner_changes"])),
      baselineScore: finite(r["baseline_score"]),
      bestScore: finite(r["best_score"]),
      sweepWallS: finite(r["sweep_wall_s"]),
    });
  }
  return out;
}

/** `{a: 1, b: "x"}` → `a=1, b=x` (objects as JSON), in the record's key order. */
function assignments(r: Record<string, Json> | null): string {
  if (r === null) return "";
  return Object.entries(r)
    .map(([k, x]) => `${k}=${typeof x === "string" ? x : JSON.stringify(x)}`)
    .join(", ");
}

function readTickReplicas(ticks: Record<string, Json>[], disagg: boolean, decodeRole: Role): TickReplicas[] {
  const pools: { key: string; role: Role }[] = disagg
    ? [
        { key: "prefill", role: "prefill" },
        { key: "decode", role: "decode" },
      ]
    : [{ key: "decode", role: decodeRole }];
  const out: TickReplicas[] = [];
  for (const { key, role } of pools) {
    const series: TickReplicas = { role, atMs: [], ready: [], provisioned: [] };
    for (const tick of ticks) {
      const at = finite(tick["at_ms"]);
      const topo = record(record(tick["topology"])?.[key]);
      const ready = topo === null ? null : finite(topo["active_count"]);
      if (at === null || topo === null || ready === null) continue;
      const starting = finite(topo["starting_count"]) ?? 0;
      const draining = finite(topo["draining_count"]) ?? 0;
      series.atMs.push(at);
      series.ready.push(ready);
      series.provisioned.push(ready + starting + draining);
    }
    if (series.atMs.length > 0) out.push(series);
  }
  return out;
}

function readScalingEvents(v: Json, decodeRole: Role): ScalingMark[] {
  const out: ScalingMark[] = [];
  for (const e of list(v)) {
    const r = record(e);
    if (r === null) continue;
    const atS = finite(r["at_s"]);
    const from = finite(r["from_count"]);
    const to = finite(r["to_count"]);
    const component = text(r["component"]);
    if (atS === null || from === null || to === null || component === null) continue;
    const role: Role = component === "prefill" ? "prefill" : component === "decode" ? "decode" : decodeRole;
    out.push({ atMs: atS * 1000, role, from, to, direction: to >= from ? "up" : "down" });
  }
  return out;
}

function readLoadWindows(ticks: Record<string, Json>[], disagg: boolean, decodeRole: Role): LoadWindow[] {
  const out: LoadWindow[] = [];
  for (const tick of ticks) {
    const at = finite(tick["at_ms"]);
    const traffic = record(record(tick["input"])?.["traffic"]);
    if (at === null || traffic === null) continue;
    const durationS = finite(traffic["duration_s"]);
    const requests = finite(traffic["num_req"]);
    if (durationS === null || durationS <= 0 || requests === null) continue;
    const diag = record(record(tick["effects"])?.["diagnostics"]) ?? {};
    const floors: LoadWindow["floors"] = [];
    const decodeFloor = finite(diag["throughput_lower_bound_decode"]);
    const prefillFloor = finite(diag["throughput_lower_bound_prefill"]);
    // An aggregated Planner reports a prefill bound too, but only the decode one sizes its pool.
    if (disagg && prefillFloor !== null) floors.push({ role: "prefill", replicas: prefillFloor });
    if (decodeFloor !== null) floors.push({ role: decodeRole, replicas: decodeFloor });
    out.push({
      atMs: at,
      windowMs: durationS * 1000,
      observed: { requests, isl: finite(traffic["isl"]), osl: finite(traffic["osl"]) },
      predicted: {
        requests: finite(diag["predicted_num_req"]),
        isl: finite(diag["predicted_isl"]),
        osl: finite(diag["predicted_osl"]),
      },
      floors,
    });
  }
  return out;
}

/** The Planner settings worth a glance in the header. */
function plannerSettings(cfg: Record<string, Json>): { label: string; value: string }[] {
  const out: { label: string; value: string }[] = [];
  const add = (label: string, v: Json, unit = ""): void => {
    if (typeof v === "number" && Number.isFinite(v)) out.push({ label, value: `${v}${unit}` });
    else if (typeof v === "string") out.push({ label, value: v });
    else if (typeof v === "boolean") out.push({ label, value: v ? "on" : "off" });
  };
  add("Load scaling", cfg["enable_load_scaling"]);
  add("Throughput scaling", cfg["enable_throughput_scaling"]);
  add("Load predictor", cfg["load_predictor"]);
  add("Load interval", cfg["load_adjustment_interval_seconds"], " s");
  add("Throughput interval", cfg["throughput_adjustment_interval_seconds"], " s");
  add("Max GPU budget", finite(cfg["max_gpu_budget"]) === -1 ? null : cfg["max_gpu_budget"]);
  add("Target", cfg["optimization_target"]);
  return out;
}
