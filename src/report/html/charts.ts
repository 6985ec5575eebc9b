/**
 * The report's charts as ECharts options: plain JSON built here (typed, testable without a
 * browser) and handed to `setOption` by the page script. A chart whose data is missing or empty is
 * not built at all, so a run without a Planner simply has fewer charts.
 */
import type { EChartsOption, LineSeriesOption, ScatterSeriesOption, YAXisComponentOption } from "echarts";
import type {
  LoadWindow,
  Percentiles,
  PlannerView,
  ReportModel,
  Role,
  ScalingMark,
  Timeline,
} from "./model.js";

export interface ChartSpec {
  /** Stable id: the element id and the key the browser test reports on. */
  id: string;
  title: string;
  /** One line under the title saying how to read the chart. */
  note: string;
  /** Spans both grid columns. */
  wide: boolean;
  option: EChartsOption;
}

export interface ChartSection {
  title: string;
  charts: ChartSpec[];
}

export type Point = [number, number | null];

/** The x axis unit: seconds for short runs, minutes up to a day, hours beyond. */
export interface TimeUnit {
  label: string;
  ms: number;
}

export function timeUnitFor(durationMs: number): TimeUnit {
  if (durationMs <= 15 * 60_000) return { label: "s", ms: 1000 };
  if (durationMs <= 24 * 3_600_000) return { label: "min", ms: 60_000 };
  return { label: "h", ms: 3_600_000 };
}

const ROLE_COLORS: Record<Role, string> = { aggregated: "#2563eb", prefill: "#d97706", decode: "#7c3aed" };
/** Lighter tints of the role colors for the throughput floor. */
const FLOOR_COLORS: Record<Role, string> = { aggregated: "#93c5fd", prefill: "#fcd34d", decode: "#c4b5fd" };
const PERCENTILE_COLORS = { p50: "#2563eb", p90: "#d97706", p99: "#dc2626" };
const SLA_COLOR = "#b91c1c";
/** Distinct hues for per-worker series, in worker order. */
const WORKER_COLORS = [
  "#2563eb",
  "#f59e0b",
  "#10b981",
  "#ef4444",
  "#8b5cf6",
  "#0ea5e9",
  "#ec4899",
  "#84cc16",
  "#64748b",
  "#14b8a6",
];
const OBSERVED_COLOR = "#0f766e";
const PREDICTED_COLOR = "#c2410c";

export function buildChartSections(model: ReportModel): ChartSection[] {
  const unit = timeUnitFor(model.durationMs);
  const ctx: Ctx = { unit, endX: x(model.durationMs, unit), model };
  const sections: ChartSection[] = [
    { title: "Fleet", charts: present([replicasChart(ctx), gpusChart(ctx)]) },
    { title: "Latency", charts: present([latencyChart(ctx, "ttft"), latencyChart(ctx, "itl")]) },
    {
      title: "Throughput and load",
      charts: present([throughputChart(ctx), slaChart(ctx), ...loadCharts(ctx)]),
    },
    { title: "Workers", charts: present(WORKER_CHARTS.map((c) => workerChart(ctx, c))) },
  ];
  return sections.filter((s) => s.charts.length > 0);
}

interface Ctx {
  unit: TimeUnit;
  /** Run end on the x axis. */
  endX: number;
  model: ReportModel;
}

function present(charts: (ChartSpec | null)[]): ChartSpec[] {
  return charts.filter((c): c is ChartSpec => c !== null);
}

// ---------------------------------------------------------------------------------------------
// Fleet

function replicasChart(ctx: Ctx): ChartSpec | null {
  const planner = ctx.model.planner;
  if (planner !== null && planner.replicas.length > 0) return plannerReplicasChart(ctx, planner);
  const timeline = ctx.model.timeline;
  if (timeline === null || timeline.activeWorkers.length === 0) return null;
  const series: LineSeriesOption[] = timeline.activeWorkers.map(({ role, counts }) =>
    stepLine(`${role} ready`, holdToEnd(bucketPoints(ctx, timeline, counts), ctx.endX), ROLE_COLORS[role]),
  );
  return {
    id: "replicas",
    title: "Replicas per role",
    note: "Ready workers at each time-series bucket start (no Planner in this run).",
    wide: true,
    option: chartOption(ctx, series, { yAxis: countAxis("workers") }),
  };
}

function plannerReplicasChart(ctx: Ctx, planner: PlannerView): ChartSpec {
  const series: (LineSeriesOption | ScatterSeriesOption)[] = [];
  for (const r of planner.replicas) {
    const color = ROLE_COLORS[r.role];
    // A tick records the topology it found, which held since the previous tick (or the start).
    const ready = fromStart(r.atMs.map((at, i): Point => [x(at, ctx.unit), r.ready[i]]));
    series.push(stepLine(`${r.role} ready`, holdToEnd(ready, ctx.endX), color));
    if (r.provisioned.some((p, i) => p !== r.ready[i])) {
      const provisioned = fromStart(r.atMs.map((at, i): Point => [x(at, ctx.unit), r.provisioned[i]]));
      series.push({
        ...stepLine(`${r.role} provisioned`, holdToEnd(provisioned, ctx.endX), color),
        lineStyle: { width: 1.5, type: "dashed", color },
      });
    }
  }
  for (const role of rolesOf(planner.load.flatMap((w) => w.floors.map((f) => f.role)))) {
    const floors = planner.load.flatMap((w): Point[] => {
      const f = w.floors.find((fl) => fl.role === role);
      return f === undefined ? [] : [[x(w.atMs, ctx.unit), f.replicas]];
    });
    series.push({
      ...stepLine(`${role} throughput floor`, holdToEnd(floors, ctx.endX), FLOOR_COLORS[role]),
      lineStyle: { width: 2, type: "dotted", color: FLOOR_COLORS[role] },
      z: 1,
    });
  }
  series.push(...scalingMarkers(ctx, planner.scalingEvents, "scaling"));
  series.push(...scalingMarkers(ctx, planner.recommendedEvents, "recommended"));
  const notes = [
    `Workers per role at each Planner tick (${planner.totalTicks} ticks)`,
    "triangles: scaling decisions",
  ];
  if (planner.recommendedEvents.length > 0) notes.push("diamonds: advisory recommendations (not applied)");
  if (series.some((s) => String(s.name).endsWith("throughput floor"))) {
    notes.push("dotted: replicas the throughput loop requires");
  }
  return {
    id: "replicas",
    title: "Replicas per role and scaling events",
    note: `${notes.join("; ")}.`,
    wide: true,
    option: chartOption(ctx, series, { yAxis: countAxis("workers") }),
  };
}

/**
 * Provisioned GPUs against the Planner's budget (runs with a Planner): exact steps from the
 * lifecycle records, the budget dashed, and the stretches above it shaded.
 */
function gpusChart(ctx: Ctx): ChartSpec | null {
  const { planner, fleet } = ctx.model;
  const steps = fleet.gpuSteps;
  if (planner === null || steps === null || steps.gpus.length === 0) return null;
  const points = steps.atMs.map((at, i): Point => [x(at, ctx.unit), steps.gpus[i]]);
  const provisioned: LineSeriesOption = {
    ...stepLine("provisioned GPUs", holdToEnd(points, ctx.endX), "#0f766e"),
    areaStyle: { opacity: 0.08 },
  };
  const budget = fleet.budget;
  const series: LineSeriesOption[] = [provisioned];
  if (budget !== null) {
    const over: [{ xAxis: number }, { xAxis: number }][] = [];
    for (let i = 0; i < steps.gpus.length; i++) {
      if (steps.gpus[i] <= budget) continue;
      const end = i + 1 < steps.atMs.length ? x(steps.atMs[i + 1], ctx.unit) : ctx.endX;
      over.push([{ xAxis: points[i][0] }, { xAxis: end }]);
    }
    if (over.length > 0) {
      provisioned.markArea = { silent: true, itemStyle: { color: "rgba(220, 38, 38, 0.12)" }, data: over };
    }
    series.push({
      ...line(
        `budget ${budget} GPUs`,
        [
          [0, budget],
          [ctx.endX, budget],
        ],
        SLA_COLOR,
      ),
      lineStyle: { width: 2, type: "dashed", color: SLA_COLOR },
      sampling: undefined,
      z: 10,
    });
  }
  const how =
    steps.source === "lifecycle"
      ? "from the lifecycle records"
      : steps.source === "timeseries"
        ? "sampled at each time-series bucket start"
        : "fixed";
  const notes = [`GPUs of starting, ready and draining workers (${how})`];
  if (budget !== null) notes.push(`dashed: the Planner's budget (max_num_gpus = ${budget})`);
  if (fleet.overBudget !== null) notes.push("shaded: above the budget");
  return {
    id: "gpus",
    title: fleet.overBudget === null ? "Provisioned GPUs" : "Provisioned GPUs — above the budget",
    note: `${notes.join("; ")}.`,
    wide: true,
    option: chartOption(ctx, series, { yAxis: countAxis("GPUs") }),
  };
}

function scalingMarkers(
  ctx: Ctx,
  events: ScalingMark[],
  kind: "scaling" | "recommended",
): ScatterSeriesOption[] {
  const out: ScatterSeriesOption[] = [];
  for (const direction of ["up", "down"] as const) {
    const picked = events.filter((e) => e.direction === direction);
    if (picked.length === 0) continue;
    const advisory = kind === "recommended";
    out.push({
      type: "scatter",
      name: `${advisory ? "recommended" : "scale"} ${direction}`,
      symbol: advisory ? "diamond" : "triangle",
      symbolRotate: direction === "down" ? 180 : 0,
      symbolSize: 11,
      z: 5,
      itemStyle: advisory
        ? { color: "#ffffff", borderColor: direction === "up" ? "#15803d" : "#b91c1c", borderWidth: 2 }
        : { color: direction === "up" ? "#15803d" : "#b91c1c" },
      data: picked.map((e) => ({
        value: [x(e.atMs, ctx.unit), e.to],
        name: `${e.role} ${e.from} → ${e.to}`,
      })),
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Latency

/** The latency series to draw: the run-sized buckets of `timeseries.latency`, else the fine ones. */
interface LatencyView {
  intervalMs: number;
  tMs: number[];
  p: Percentiles;
  samples: number[] | null;
}

function latencyView(t: Timeline, kind: "ttft" | "itl"): LatencyView | null {
  const l = t.latency;
  const coarse = l === null ? null : kind === "ttft" ? l.ttft : l.itl;
  if (l !== null && coarse !== null) {
    return {
      intervalMs: l.intervalMs,
      tMs: l.tMs,
      p: coarse,
      samples: kind === "ttft" ? l.ttftSamples : l.itlSamples,
    };
  }
  const fine = kind === "ttft" ? t.ttft : t.itl;
  return fine === null ? null : { intervalMs: t.intervalMs, tMs: t.tMs, p: fine, samples: null };
}

/** What each latency chart says of itself; the SLA line is the Planner's target of that latency. */
const LATENCY_CHARTS = {
  ttft: { title: "Time to first token", what: "TTFT of requests whose first token came in each bucket" },
  itl: { title: "Inter-token latency", what: "Mean ITL per request, of requests completed in each bucket" },
} as const;

function latencyChart(ctx: Ctx, kind: "ttft" | "itl"): ChartSpec | null {
  const t = ctx.model.timeline;
  const view = t === null ? null : latencyView(t, kind);
  if (view === null) return null;
  const sla = kind === "ttft" ? ctx.model.sla.ttftMs : ctx.model.sla.itlMs;
  return percentileChart(ctx, view, { id: kind, ...LATENCY_CHARTS[kind], sla });
}

/** `(50 s buckets, median 168 requests each)`. */
function bucketNote(view: LatencyView): string {
  const size = `${formatInterval(view.intervalMs)} buckets`;
  if (view.samples === null) return size;
  const filled = view.samples.filter((n) => n > 0).sort((a, b) => a - b);
  if (filled.length === 0) return size;
  const median = filled[Math.floor((filled.length - 1) / 2)];
  return `${size}, median ${median} request${median === 1 ? "" : "s"} each`;
}

function percentileChart(
  ctx: Ctx,
  view: LatencyView,
  spec: { id: string; title: string; what: string; sla: number | null },
): ChartSpec | null {
  // p99 first so p50 is drawn on top of it; log scale because the tail is 10× the median.
  // Log axes cannot show 0: such buckets become gaps.
  const positive = (xs: (number | null)[]): (number | null)[] =>
    xs.map((v) => (v !== null && v > 0 ? v : null));
  const series: LineSeriesOption[] = (["p99", "p90", "p50"] as const).map((k) =>
    sparseAware(thin(line(k, pointsAt(ctx, view.tMs, positive(view.p[k])), PERCENTILE_COLORS[k]))),
  );
  if (!series.some(hasPoints)) return null;
  if (spec.sla !== null && spec.sla > 0) {
    // A series of its own (not a markLine): drawn above the percentiles, listed in the legend,
    // shown in the tooltip, and counted in the axis range even when every point is below it.
    series.push({
      ...line(
        `SLA ${spec.sla} ms`,
        [
          [0, spec.sla],
          [ctx.endX, spec.sla],
        ],
        SLA_COLOR,
      ),
      lineStyle: { width: 2, type: "dashed", color: SLA_COLOR },
      sampling: undefined,
      z: 10,
    });
  }
  return {
    id: spec.id,
    title: spec.title,
    note: `${spec.what} (${bucketNote(view)})${spec.sla === null ? "" : `; dashed: SLA ${spec.sla} ms`}.`,
    wide: false,
    option: {
      ...chartOption(ctx, series, { yAxis: { type: "log", name: "ms (log)", logBase: 10 } }),
      legend: { ...LEGEND, data: ["p50", "p90", "p99", ...series.slice(3).map((sr) => String(sr.name))] },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Throughput and load

function throughputChart(ctx: Ctx): ChartSpec | null {
  const t = ctx.model.timeline;
  if (t === null) return null;
  const bin = rateBin(t);
  const series: LineSeriesOption[] = [];
  if (t.outputTokens !== null) {
    series.push({
      ...line("output tokens/s", ratePoints(ctx, t, t.outputTokens, bin), "#16a34a"),
      yAxisIndex: 1,
      lineStyle: { width: 1 },
      areaStyle: { opacity: 0.12 },
      z: 1,
    });
  }
  if (t.arrivals !== null) series.push(line("arrivals", ratePoints(ctx, t, t.arrivals, bin), "#64748b"));
  if (t.completions !== null) {
    series.push(line("completions", ratePoints(ctx, t, t.completions, bin), "#2563eb"));
  }
  if (!series.some(hasPoints)) return null;
  return {
    id: "throughput",
    title: "Throughput",
    note: `Requests per second arriving and completing, and output tokens per second (${formatInterval(bin * t.intervalMs)} bins).`,
    wide: true,
    option: chartOption(ctx, series, {
      yAxis: [
        { type: "value", name: "req/s", min: 0 },
        { type: "value", name: "tok/s", min: 0, splitLine: { show: false } },
      ],
    }),
  };
}

/**
 * SLA attainment and goodput per time window (with an SLA): the share of the requests completed in
 * a window that met the SLA, and good requests per second, in the throughput chart's bins.
 */
function slaChart(ctx: Ctx): ChartSpec | null {
  const t = ctx.model.timeline;
  if (t === null || t.goodCompletions === null || t.completions === null) return null;
  const bin = rateBin(t);
  const series: LineSeriesOption[] = [
    sparseAware(
      line("SLA attainment %", attainmentPoints(ctx, t, t.goodCompletions, t.completions), "#0f766e"),
    ),
    {
      ...line("goodput req/s", ratePoints(ctx, t, t.goodCompletions, bin), "#2563eb"),
      yAxisIndex: 1,
      lineStyle: { width: 1 },
      areaStyle: { opacity: 0.1 },
    },
  ];
  if (!series.some(hasPoints)) return null;
  return {
    id: "sla-attainment",
    title: "SLA attainment and goodput",
    note: `Share of the requests completed in each window that met the SLA, and good requests per second (${formatInterval(bin * t.intervalMs)} windows).`,
    wide: true,
    option: chartOption(ctx, series, {
      yAxis: [
        { type: "value", name: "% within SLA", min: 0, max: 100 },
        { type: "value", name: "good req/s", min: 0, splitLine: { show: false } },
      ],
    }),
  };
}

/** Percent of the completions of each `rateBin` window that were good (null: none completed). */
export function attainmentPoints(
  ctx: { readonly unit: TimeUnit },
  t: Timeline,
  good: readonly number[],
  completions: readonly number[],
): Point[] {
  const bin = rateBin(t);
  const out: Point[] = [];
  for (let i = 0; i < completions.length; i += bin) {
    const end = Math.min(completions.length, i + bin);
    let g = 0;
    let done = 0;
    for (let k = i; k < end; k++) {
      g += good[k];
      done += completions[k];
    }
    out.push([x(t.tMs[i], ctx.unit), done === 0 ? null : round((100 * g) / done)]);
  }
  return out;
}

/**
 * Buckets merged per rate point. A rate over a bucket with a handful of arrivals is mostly noise,
 * so buckets are summed into bins of about ten arrivals each, keeping 40 to 240 bins.
 */
export function rateBin(t: Timeline): number {
  const n = t.tMs.length;
  const total = t.arrivals === null ? 0 : t.arrivals.reduce((a, b) => a + b, 0);
  const bins = Math.min(240, Math.max(40, total / 10));
  return Math.max(1, Math.round(n / bins));
}

/** Per-second rates of `counts` summed over bins of `bin` buckets, one point at each bin start. */
function ratePoints(ctx: Ctx, t: Timeline, counts: number[], bin: number): Point[] {
  const out: Point[] = [];
  for (let i = 0; i < counts.length; i += bin) {
    const end = Math.min(counts.length, i + bin);
    let sum = 0;
    for (let k = i; k < end; k++) sum += counts[k];
    out.push([x(t.tMs[i], ctx.unit), round(sum / (((end - i) * t.intervalMs) / 1000))]);
  }
  return out;
}

/** Observed traffic of each throughput window against what the Planner predicted for it. */
function loadCharts(ctx: Ctx): ChartSpec[] {
  const planner = ctx.model.planner;
  if (planner === null || planner.load.length === 0) return [];
  const windows = planner.load;
  const rateSeries: LineSeriesOption[] = [
    stepLine(
      "observed",
      windowPoints(ctx, windows, (w) => w.observed.requests / (w.windowMs / 1000), "observed"),
      OBSERVED_COLOR,
    ),
    dashed(
      stepLine(
        "predicted",
        windowPoints(ctx, windows, (w) => rateOf(w.predicted.requests, w.windowMs), "predicted"),
        PREDICTED_COLOR,
      ),
    ),
  ];
  const t = ctx.model.timeline;
  if (t !== null && t.arrivals !== null) {
    rateSeries.unshift({
      ...line("arrivals", ratePoints(ctx, t, t.arrivals, rateBin(t)), "#cbd5e1"),
      lineStyle: { width: 1, color: "#cbd5e1" },
      z: 1,
    });
  }
  const charts: ChartSpec[] = [];
  if (rateSeries.some(hasPoints)) {
    charts.push({
      id: "load-rate",
      title: "Request rate: observed vs predicted",
      note: "Throughput scaling: each window's observed rate, and the rate predicted for it one window earlier.",
      wide: false,
      option: chartOption(ctx, rateSeries, { yAxis: { type: "value", name: "req/s", min: 0 } }),
    });
  }
  const lengthSeries: LineSeriesOption[] = [
    stepLine(
      "ISL observed",
      windowPoints(ctx, windows, (w) => w.observed.isl, "observed"),
      OBSERVED_COLOR,
    ),
    dashed(
      stepLine(
        "ISL predicted",
        windowPoints(ctx, windows, (w) => w.predicted.isl, "predicted"),
        PREDICTED_COLOR,
      ),
    ),
    {
      ...stepLine(
        "OSL observed",
        windowPoints(ctx, windows, (w) => w.observed.osl, "observed"),
        "#0891b2",
      ),
      yAxisIndex: 1,
    },
    {
      ...dashed(
        stepLine(
          "OSL predicted",
          windowPoints(ctx, windows, (w) => w.predicted.osl, "predicted"),
          "#db2777",
        ),
      ),
      yAxisIndex: 1,
    },
  ];
  if (lengthSeries.some(hasPoints)) {
    charts.push({
      id: "load-lengths",
      title: "Prompt and output length: observed vs predicted",
      note: "Mean input (ISL, left axis) and output (OSL, right axis) tokens per request of each throughput window.",
      wide: false,
      option: chartOption(ctx, lengthSeries, {
        yAxis: [
          { type: "value", name: "ISL tokens", min: 0 },
          { type: "value", name: "OSL tokens", min: 0, splitLine: { show: false } },
        ],
      }),
    });
  }
  return charts;
}

/**
 * Step points over throughput windows: an observation covers the window that ended at its tick,
 * a prediction the window that starts there. The last window is closed with a final point.
 */
function windowPoints(
  ctx: Ctx,
  windows: LoadWindow[],
  value: (w: LoadWindow) => number | null,
  kind: "observed" | "predicted",
): Point[] {
  const out: Point[] = [];
  for (const w of windows) {
    const start = kind === "observed" ? w.atMs - w.windowMs : w.atMs;
    out.push([x(start, ctx.unit), round(value(w))]);
  }
  const last = windows[windows.length - 1];
  const end = kind === "observed" ? last.atMs : last.atMs + last.windowMs;
  out.push([x(end, ctx.unit), round(value(last))]);
  return out;
}

function rateOf(requests: number | null, windowMs: number): number | null {
  return requests === null ? null : requests / (windowMs / 1000);
}

// ---------------------------------------------------------------------------------------------
// Workers

/** A per-worker chart: its head, its y axis and the timeline column it draws. */
interface WorkerChart extends Pick<ChartSpec, "id" | "title" | "note"> {
  readonly yAxis: YAXisComponentOption;
  readonly values: (w: Timeline["workers"][number]) => (number | null)[];
}

const WORKER_CHARTS: readonly WorkerChart[] = [
  {
    id: "queue-depth",
    title: "Queue depth per worker",
    note: "Requests waiting on each worker at each bucket start (gaps: worker not provisioned).",
    yAxis: countAxis("requests"),
    values: (w) => w.queueDepth,
  },
  {
    id: "kv-utilization",
    title: "KV cache utilization per worker",
    note: "Used KV blocks over all KV blocks of each worker, at each bucket start.",
    yAxis: { type: "value", name: "%", min: 0, max: 100 },
    values: (w) => w.kvUtilization.map((u) => (u === null ? null : u * 100)),
  },
];

/** One line per worker of the chart's column at each bucket start; null when no worker has a point. */
function workerChart(ctx: Ctx, chart: WorkerChart): ChartSpec | null {
  const t = ctx.model.timeline;
  if (t === null || t.workers.length === 0) return null;
  const series = t.workers.map((w) =>
    line(`${w.role} ${w.workerId}`, bucketPoints(ctx, t, chart.values(w)), undefined),
  );
  if (!series.some(hasPoints)) return null;
  const { id, title, note, yAxis } = chart;
  return {
    id,
    title,
    note,
    wide: false,
    option: { ...chartOption(ctx, series, { yAxis }), color: WORKER_COLORS },
  };
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

/** A chart over virtual time from 0 to `endX` (in `unit`), zoom linked across the page. */
export function chartOption(
  ctx: { readonly unit: TimeUnit; readonly endX: number },
  series: (LineSeriesOption | ScatterSeriesOption)[],
  axes: { yAxis: YAXisComponentOption | YAXisComponentOption[] },
): EChartsOption {
  const dualAxis = Array.isArray(axes.yAxis) && axes.yAxis.length > 1;
  return {
    animation: false,
    // Zooming one chart zooms every chart of the page (the page script connects them).
    dataZoom: [{ type: "inside", xAxisIndex: 0, filterMode: "none" }],
    grid: { left: 56, right: dualAxis ? 60 : 24, top: 48, bottom: 44 },
    legend: LEGEND,
    tooltip: { trigger: "axis", axisPointer: { type: "line" }, confine: true },
    xAxis: {
      type: "value",
      name: `time (${ctx.unit.label})`,
      nameLocation: "middle",
      nameGap: 26,
      min: 0,
      max: ctx.endX,
      axisLine: { lineStyle: { color: "#94a3b8" } },
      // The run's end is rarely a round number: its label would crowd the last tick.
      axisLabel: { showMaxLabel: false },
      splitLine: { show: false },
    },
    yAxis: axes.yAxis,
    series,
  };
}

export const LEGEND = {
  type: "scroll",
  top: 0,
  left: 0,
  right: 0,
  icon: "roundRect",
  itemWidth: 14,
  itemHeight: 4,
} as const;

function countAxis(name: string): YAXisComponentOption {
  return { type: "value", name, min: 0, minInterval: 1 };
}

export function line(name: string, data: Point[], color: string | undefined): LineSeriesOption {
  return {
    type: "line",
    name,
    data,
    showSymbol: false,
    symbolSize: 4,
    // Thousands of points: LTTB keeps the shape when there are more points than pixels.
    sampling: "lttb",
    connectNulls: false,
    lineStyle: { width: 1.5 },
    emphasis: { focus: "series" },
    ...(color === undefined ? {} : { color }),
  };
}

export function stepLine(name: string, data: Point[], color: string): LineSeriesOption {
  // A value holds until the next point; LTTB would cut corners of a staircase.
  const { sampling: _lttb, ...base } = line(name, data, color);
  return { ...base, step: "end", lineStyle: { width: 2 } };
}

/**
 * Percentiles of buckets without requests are null. Lines join the buckets that have data, and
 * when most buckets are empty (a light load in fine buckets) each bucket also gets a dot.
 */
export function sparseAware(s: LineSeriesOption): LineSeriesOption {
  const points = s.data as Point[];
  const filled = points.filter((p) => p[1] !== null).length;
  const sparse = filled < 0.5 * points.length || filled < 200;
  return { ...s, connectNulls: true, showSymbol: sparse, symbolSize: 3 };
}

function thin(s: LineSeriesOption): LineSeriesOption {
  return { ...s, lineStyle: { width: 1 } };
}

function dashed(s: LineSeriesOption): LineSeriesOption {
  return { ...s, lineStyle: { width: 2, type: "dashed" } };
}

export function hasPoints(s: LineSeriesOption): boolean {
  return (s.data as Point[]).some((p) => p[1] !== null);
}

function bucketPoints(ctx: Ctx, t: Timeline, values: (number | null)[]): Point[] {
  return pointsAt(ctx, t.tMs, values);
}

function pointsAt(ctx: Ctx, tMs: number[], values: (number | null)[]): Point[] {
  return tMs.map((at, i): Point => [x(at, ctx.unit), round(values[i])]);
}

/** Starts a tick series at time 0 with its first value. */
function fromStart(points: Point[]): Point[] {
  return points.length === 0 || points[0][0] <= 0 ? points : [[0, points[0][1]], ...points];
}

/** Repeats the last value at the run's end so a step line reaches the right edge. */
function holdToEnd(points: Point[], endX: number): Point[] {
  if (points.length === 0) return points;
  const last = points[points.length - 1];
  return last[0] < endX ? [...points, [endX, last[1]]] : points;
}

function rolesOf(roles: Role[]): Role[] {
  return (["aggregated", "prefill", "decode"] as const).filter((r) => roles.includes(r));
}

export function x(ms: number, unit: TimeUnit): number {
  return Number((ms / unit.ms).toFixed(4));
}

/** Four significant digits: plenty on screen, and it keeps the inlined JSON small. */
export function round(v: number | null): number | null {
  return v === null ? null : Number(v.toPrecision(4));
}

export function formatInterval(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1000} s`;
  return `${ms / 60_000} min`;
}
