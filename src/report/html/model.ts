/**
 * What the report shows, read out of a prediction document: run facts, the time series, and the
 * Planner's replicas, scaling events and load predictions. Pure data, no presentation.
 */
import type { PlannerConfigPayload, PlannerReport, PlannerTick, ScalingEvent } from "../../output/planner.js";
import { predictionReadSchema } from "../../output/read.js";
import type { LiveValue, RetuneEvent } from "../../output/retune.js";
import type { RunInfo } from "../../output/run.js";
import type { PercentileSeries, TimeseriesReport } from "../../output/timeseries.js";
import type { Tolerant } from "../../output/tolerant.js";
import { type FleetFacts, fleetFactsOf } from "../fleet.js";

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
  /** With an SLA: good completions and their output tokens per bucket; null otherwise or in older files. */
  goodCompletions: number[] | null;
  goodOutputTokens: number[] | null;
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

/** `doc` read through the contract's tolerant schema (src/output/read.ts): parts that do not read are left out. */
export function readReportModel(doc: unknown, slaOverride: Partial<Sla> = {}): ReportModel {
  const root = predictionReadSchema().parse(doc);
  const summary = root.summary ?? {};
  const timeline = readTimeline(root.timeseries);
  const planner = root.planner ?? null;
  const config = planner?.metadata?.planner_config ?? {};
  const spanMs = timeline === null ? 0 : timeline.tMs[timeline.tMs.length - 1] + timeline.intervalMs;
  return {
    summary,
    run: root.run === undefined ? null : readRun(root.run),
    fleet: fleetFactsOf(root),
    durationMs: summary["duration_ms"] ?? spanMs,
    sla: {
      ttftMs: slaOverride.ttftMs ?? config.ttft_ms ?? null,
      itlMs: slaOverride.itlMs ?? config.itl_ms ?? null,
    },
    timeline,
    planner: planner === null ? null : readPlanner(planner),
    perRequestRecords: root.coverage === undefined ? null : (root.coverage.per_request_records ?? null),
  };
}

type Read<T> = Tolerant<T>;

/** `xs` when it is an array of exactly `n` values (a series aligned with `t_ms`), else null. */
function aligned<T>(xs: readonly T[] | undefined, n: number): T[] | null {
  return xs !== undefined && xs.length === n ? [...xs] : null;
}

function readRun(run: Read<RunInfo>): RunView {
  const roles: RunRoleView[] = [];
  for (const role of ROLES) {
    const r = run.topology?.[role];
    if (r?.replicas === undefined) continue;
    const factors: string[] = [`TP${r.tensor ?? 1}`];
    for (const [n, label] of [
      [r.pipeline, "PP"],
      [r.attention_data, "DP"],
      [r.moe_tensor, "MoE-TP"],
      [r.moe_expert, "EP"],
    ] as const) {
      if (n !== undefined && n !== 1) factors.push(`${label}${n}`);
    }
    roles.push({
      role,
      replicas: r.replicas,
      parallelism: factors.join(" · "),
      gpusPerWorker: r.gpus_per_worker ?? 1,
      hardware: r.hardware ?? null,
      timing: r.timing ?? null,
    });
  }
  const planner = run.planner ?? null;
  return {
    model: run.model ?? null,
    hardware: run.hardware ?? null,
    backend: run.backend ?? null,
    stack: run.stack ?? null,
    roles,
    startingGpus: run.starting_gpus ?? null,
    router: run.router === undefined ? null : routerText(run.router),
    planner:
      planner === null
        ? null
        : {
            target: planner.target ?? null,
            maxGpus: planner.max_num_gpus ?? null,
            advisory: planner.advisory === true,
            retuneObjective: planner.retune?.objective ?? null,
          },
    traffic: run.traffic === undefined ? null : readRunTraffic(run.traffic),
  };
}

function routerText(r: Read<RunInfo["router"]>): string | null {
  const policy = r.policy ?? null;
  if (policy !== "kv_router") return policy;
  const parts: string[] = [];
  const add = (label: string, v: number | undefined): void => {
    if (v !== undefined) parts.push(`${label} ${v}`);
  };
  add("overlap credit", r.overlap_score_credit);
  add("prefill load scale", r.prefill_load_scale);
  add("temperature", r.temperature);
  if (r.prefill_load_model === "aic") parts.push("AIC prefill load");
  return parts.length === 0 ? policy : `${policy} (${parts.join(", ")})`;
}

function readRunTraffic(t: Read<RunInfo["traffic"]>): NonNullable<RunView["traffic"]> {
  const source = t.source ?? null;
  const files = t.files ?? 1;
  const what =
    source === "synthetic"
      ? `synthetic ${t.input_tokens ?? "?"}/${t.output_tokens ?? "?"} tokens`
      : `${t.trace ?? "trace"}${files > 1 ? ` (+${files - 1} files)` : ""}${source === null ? "" : ` (${source})`}`;
  const loadType = t.load ?? null;
  let load = loadType;
  if (loadType === "trace_timestamps") {
    const speedup = t.speedup;
    load = speedup === undefined || speedup === 1 ? "trace timestamps" : `trace timestamps ÷ ${speedup}`;
  } else if (loadType === "concurrency") {
    const warmup = t.warmup_sessions;
    load = `concurrency ${t.concurrency ?? "?"}${warmup === undefined ? "" : ` after ${warmup} warm-up sessions`}`;
  } else if (loadType !== null) load = `${loadType} ${t.requests_per_second ?? "?"} req/s`;
  return { source: what, requests: t.requests ?? null, load };
}

/** A bucketed series' time axis (bucket starts copied), or null when it has no positive interval or no buckets. */
function bucketAxis(
  series: { readonly interval_ms?: number; readonly t_ms?: readonly number[] } | undefined,
): { intervalMs: number; tMs: number[] } | null {
  const intervalMs = series?.interval_ms;
  const tMs = series?.t_ms;
  if (intervalMs === undefined || intervalMs <= 0 || tMs === undefined || tMs.length === 0) return null;
  return { intervalMs, tMs: [...tMs] };
}

function readTimeline(ts: Read<TimeseriesReport> | undefined): Timeline | null {
  const axis = bucketAxis(ts);
  if (ts === undefined || axis === null) return null;
  const n = axis.tMs.length;
  const activeWorkers: Timeline["activeWorkers"] = [];
  for (const role of ROLES) {
    const counts = aligned(ts.active_workers?.[role], n);
    if (counts !== null) activeWorkers.push({ role, counts });
  }
  const workers: WorkerSeries[] = [];
  for (const w of ts.workers ?? []) {
    const queueDepth = aligned(w.queue_depth, n);
    const kvUtilization = aligned(w.kv_utilization, n);
    if (w.role === undefined || w.worker_id === undefined || queueDepth === null || kvUtilization === null)
      continue;
    workers.push({ role: w.role, workerId: w.worker_id, queueDepth, kvUtilization });
  }
  return {
    ...axis,
    arrivals: aligned(ts.arrivals, n),
    completions: aligned(ts.completions, n),
    outputTokens: aligned(ts.output_tokens, n),
    goodCompletions: aligned(ts.good_completions, n),
    goodOutputTokens: aligned(ts.good_output_tokens, n),
    ttft: readPercentiles(ts.ttft_ms, n),
    itl: readPercentiles(ts.itl_ms, n),
    activeWorkers,
    workers,
    latency: readLatency(ts.latency),
  };
}

function readLatency(l: Read<TimeseriesReport["latency"]> | undefined): LatencyBuckets | null {
  const axis = bucketAxis(l);
  if (l === undefined || axis === null) return null;
  const n = axis.tMs.length;
  return {
    ...axis,
    ttft: readPercentiles(l.ttft_ms, n),
    ttftSamples: aligned(l.ttft_samples, n),
    itl: readPercentiles(l.itl_ms, n),
    itlSamples: aligned(l.itl_samples, n),
  };
}

function readPercentiles(p: Read<PercentileSeries> | undefined, n: number): Percentiles | null {
  const p50 = aligned(p?.p50, n);
  const p90 = aligned(p?.p90, n);
  const p99 = aligned(p?.p99, n);
  return p50 === null || p90 === null || p99 === null ? null : { p50, p90, p99 };
}

function readPlanner(planner: Read<PlannerReport>): PlannerView {
  const metadata = planner.metadata ?? {};
  const cfg = metadata.planner_config ?? {};
  const mode = metadata.mode ?? cfg.mode ?? null;
  const disagg = mode === "disagg";
  // Aggregated workers report under the decode role in the Planner's records (architecture.md).
  const decodeRole: Role = disagg ? "decode" : "aggregated";
  const ticks = planner.ticks ?? [];
  return {
    mode: disagg ? "disagg" : "agg",
    advisory: metadata.advisory === true || cfg.advisory === true,
    settings: plannerSettings(cfg),
    replicas: readTickReplicas(ticks, disagg, decodeRole),
    scalingEvents: readScalingEvents(planner.scaling_events, decodeRole),
    recommendedEvents: readScalingEvents(planner.recommended_scaling_events, decodeRole),
    load: readLoadWindows(ticks, disagg, decodeRole),
    totalTicks: planner.total_ticks ?? ticks.length,
    retune: planner.retune_events === undefined ? null : readRetuneRows(planner.retune_events),
  };
}

function readRetuneRows(events: Read<RetuneEvent>[]): RetuneRow[] {
  const out: RetuneRow[] = [];
  for (const r of events) {
    if (r.outcome === undefined) continue;
    const chosen = r.chosen ?? null;
    out.push({
      window: r.window_index ?? null,
      outcome: r.outcome,
      reason: r.reason ?? null,
      windowStartS: r.window_start_s ?? null,
      windowEndS: r.window_end_s ?? null,
      decidedAtS: r.decided_at_s ?? null,
      requests: r.num_requests ?? null,
      candidates: r.num_candidates ?? null,
      chosenRouter: chosen === null ? null : assignments(chosen.router ?? null),
      plannerChanges: assignments(r.planner_changes ?? null),
      baselineScore: r.baseline_score ?? null,
      bestScore: r.best_score ?? null,
      sweepWallS: r.sweep_wall_s ?? null,
    });
  }
  return out;
}

/** `{a: 1, b: "x"}` → `a=1, b=x`, in the record's key order. */
function assignments(r: Readonly<Record<string, LiveValue | undefined>> | null): string {
  if (r === null) return "";
  return Object.entries(r)
    .map(([k, x]) => `${k}=${typeof x === "string" ? x : JSON.stringify(x)}`)
    .join(", ");
}

function readTickReplicas(ticks: Read<PlannerTick>[], disagg: boolean, decodeRole: Role): TickReplicas[] {
  const pools: { key: "prefill" | "decode"; role: Role }[] = disagg
    ? [
        { key: "prefill", role: "prefill" },
        { key: "decode", role: "decode" },
      ]
    : [{ key: "decode", role: decodeRole }];
  const out: TickReplicas[] = [];
  for (const { key, role } of pools) {
    const series: TickReplicas = { role, atMs: [], ready: [], provisioned: [] };
    for (const tick of ticks) {
      const topo = tick.topology?.[key];
      const ready = topo?.active_count;
      if (tick.at_ms === undefined || ready === undefined) continue;
      series.atMs.push(tick.at_ms);
      series.ready.push(ready);
      series.provisioned.push(ready + (topo?.starting_count ?? 0) + (topo?.draining_count ?? 0));
    }
    if (series.atMs.length > 0) out.push(series);
  }
  return out;
}

function readScalingEvents(events: Read<ScalingEvent>[] | undefined, decodeRole: Role): ScalingMark[] {
  const out: ScalingMark[] = [];
  for (const r of events ?? []) {
    const { at_s: atS, from_count: from, to_count: to, component } = r;
    if (atS === undefined || from === undefined || to === undefined || component === undefined) continue;
    const role: Role = component === "prefill" ? "prefill" : component === "decode" ? "decode" : decodeRole;
    out.push({ atMs: atS * 1000, role, from, to, direction: to >= from ? "up" : "down" });
  }
  return out;
}

function readLoadWindows(ticks: Read<PlannerTick>[], disagg: boolean, decodeRole: Role): LoadWindow[] {
  const out: LoadWindow[] = [];
  for (const tick of ticks) {
    const traffic = tick.input?.traffic ?? null;
    const durationS = traffic?.duration_s;
    const requests = traffic?.num_req;
    if (tick.at_ms === undefined || durationS === undefined || durationS <= 0 || requests === undefined)
      continue;
    const diag = tick.effects?.diagnostics ?? {};
    const floors: LoadWindow["floors"] = [];
    const decodeFloor = diag.throughput_lower_bound_decode ?? null;
    const prefillFloor = diag.throughput_lower_bound_prefill ?? null;
    // An aggregated Planner reports a prefill bound too, but only the decode one sizes its pool.
    if (disagg && prefillFloor !== null) floors.push({ role: "prefill", replicas: prefillFloor });
    if (decodeFloor !== null) floors.push({ role: decodeRole, replicas: decodeFloor });
    out.push({
      atMs: tick.at_ms,
      windowMs: durationS * 1000,
      observed: { requests, isl: traffic?.isl ?? null, osl: traffic?.osl ?? null },
      predicted: {
        requests: diag.predicted_num_req ?? null,
        isl: diag.predicted_isl ?? null,
        osl: diag.predicted_osl ?? null,
      },
      floors,
    });
  }
  return out;
}

/** The Planner settings worth a glance in the header. */
function plannerSettings(cfg: Read<PlannerConfigPayload>): { label: string; value: string }[] {
  const out: { label: string; value: string }[] = [];
  const add = (label: string, v: number | string | boolean | undefined, unit = ""): void => {
    if (typeof v === "number") out.push({ label, value: `${v}${unit}` });
    else if (typeof v === "string") out.push({ label, value: v });
    else if (typeof v === "boolean") out.push({ label, value: v ? "on" : "off" });
  };
  add("Load scaling", cfg.enable_load_scaling);
  add("Throughput scaling", cfg.enable_throughput_scaling);
  add("Load predictor", cfg.load_predictor);
  add("Load interval", cfg.load_adjustment_interval_seconds, " s");
  add("Throughput interval", cfg.throughput_adjustment_interval_seconds, " s");
  add("Max GPU budget", cfg.max_gpu_budget === -1 ? undefined : cfg.max_gpu_budget);
  add("Target", cfg.optimization_target);
  return out;
}
