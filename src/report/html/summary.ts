/** The report's text parts: run facts, the KPI strip and the summary tables (HTML fragments). */

import { HOST_TIME_KEYS } from "../../metrics/summary.js";
import { usd } from "../fleetBlock.js";
import { escapeHtml, formatDuration, formatMs, formatNumber, formatPercent } from "./format.js";
import type { ReportModel } from "./model.js";

export interface Fact {
  label: string;
  value: string;
}

export function runFacts(model: ReportModel): Fact[] {
  const s = model.summary;
  const run = model.run;
  const facts: Fact[] = [{ label: "Mode", value: deploymentMode(model) }];
  if (run !== null) facts.push(...runBlockFacts(run));
  if (model.fleet.hardware.length > 0) {
    facts.push({
      label: "Hardware data",
      value: model.fleet.hardware.map((h) => `${h.gpu}: ${h.tier} (${h.basis})`).join("; "),
    });
  }
  facts.push({ label: "Simulated time", value: formatDuration(model.durationMs) });
  const gpus = gpusPerWorker(model);
  if (gpus !== "" && run === null) facts.push({ label: "GPUs per worker", value: gpus });
  const planner = model.planner;
  facts.push({
    label: "Planner",
    value: planner === null ? "off" : planner.advisory ? "advisory (recommends only)" : "on",
  });
  if (planner !== null) {
    if (run?.planner != null) {
      // The run block states the budget even when there is none (planner_config then omits it).
      facts.push(...planner.settings.filter((f) => f.label !== "Max GPU budget" && f.label !== "Target"));
      if (run.planner.target !== null) facts.push({ label: "Target", value: run.planner.target });
      facts.push({
        label: "GPU budget",
        value: run.planner.maxGpus === null ? "none" : `${run.planner.maxGpus} GPUs`,
      });
    } else facts.push(...planner.settings);
  }
  const sla = [
    model.sla.ttftMs === null ? null : `TTFT ${model.sla.ttftMs} ms`,
    model.sla.itlMs === null ? null : `ITL ${model.sla.itlMs} ms`,
  ].filter((x) => x !== null);
  if (sla.length > 0) facts.push({ label: "SLA", value: sla.join(", ") });
  if (s["wall_time_ms"] !== undefined) {
    // Host time: how long the simulation took on the machine that ran it, not simulated time.
    facts.push({ label: "Wall time (host)", value: formatDuration(s["wall_time_ms"]) });
  }
  return facts;
}

/** Model, hardware, backend, topology, router and traffic of the `run` block. */
function runBlockFacts(run: NonNullable<ReportModel["run"]>): Fact[] {
  const facts: Fact[] = [];
  if (run.model !== null) facts.push({ label: "Model", value: run.model });
  if (run.hardware !== null) facts.push({ label: "Hardware", value: run.hardware });
  if (run.backend !== null) facts.push({ label: "Backend", value: run.backend });
  if (run.roles.length > 0) {
    const roles = run.roles.map((r) => {
      const gpu = r.hardware !== null && r.hardware !== run.hardware ? ` on ${r.hardware}` : "";
      const timing = r.timing !== null && r.timing !== "default" ? `, ${r.timing} timing` : "";
      return `${r.role} ${r.replicas} × ${r.parallelism}${gpu}${timing}`;
    });
    const gpus = run.startingGpus === null ? "" : ` (${run.startingGpus} GPUs at start)`;
    facts.push({ label: "Topology", value: `${roles.join(" + ")}${gpus}` });
  }
  if (run.router !== null) facts.push({ label: "Router", value: run.router });
  if (run.traffic !== null) {
    const requests = run.traffic.requests === null ? "" : ` · ${formatNumber(run.traffic.requests)} requests`;
    facts.push({ label: "Traffic", value: `${run.traffic.source}${requests}` });
    if (run.traffic.load !== null) facts.push({ label: "Load", value: run.traffic.load });
  }
  return facts;
}

function deploymentMode(model: ReportModel): string {
  if (model.planner !== null) return model.planner.mode === "disagg" ? "disaggregated" : "aggregated";
  if (model.timeline !== null) {
    const roles = model.timeline.activeWorkers.map((a) => a.role);
    if (roles.includes("prefill")) return "disaggregated";
    if (roles.includes("aggregated")) return "aggregated";
  }
  return (model.summary["prefill_gpus_per_worker"] ?? 0) > 0 ? "disaggregated" : "aggregated";
}

function gpusPerWorker(model: ReportModel): string {
  const prefill = model.summary["prefill_gpus_per_worker"] ?? 0;
  const decode = model.summary["decode_gpus_per_worker"];
  if (decode === undefined) return "";
  return prefill > 0 ? `prefill ${prefill}, decode ${decode}` : String(decode);
}

export interface Kpi {
  label: string;
  value: string;
  detail: string;
  /** Drawn as a warning (provisioned GPUs above the budget). */
  alert?: boolean;
}

export function kpis(model: ReportModel): Kpi[] {
  const s = model.summary;
  const completed = s["completed_requests"];
  const good = s["goodput_completed_requests"];
  const out: Kpi[] = [
    {
      label: "Requests",
      value: formatNumber(completed ?? s["num_requests"]),
      detail:
        s["num_requests"] !== undefined && completed !== undefined && completed !== s["num_requests"]
          ? `completed of ${formatNumber(s["num_requests"])}`
          : `completed · ${formatNumber(s["request_throughput_rps"])} req/s`,
    },
    good !== undefined
      ? {
          label: "Goodput",
          value: `${formatNumber(s["goodput_request_throughput_rps"])} req/s`,
          detail: `${formatPercent(model.fleet.slaAttainment)} of requests within SLA`,
        }
      : { label: "Goodput", value: "—", detail: "no SLA in the run's evaluation" },
    {
      label: "GPU-hours",
      value: formatNumber(s["gpu_hours"]),
      detail: workerSeconds(s),
    },
    provisionedKpi(model),
    ...costKpi(model),
    {
      label: "TTFT p50",
      value: formatMs(s["median_ttft_ms"]),
      detail: `p99 ${formatMs(s["p99_ttft_ms"])} · mean ${formatMs(s["mean_ttft_ms"])}`,
    },
    {
      label: "ITL p50",
      value: formatMs(s["median_itl_ms"]),
      detail: `p99 ${formatMs(s["p99_itl_ms"])} · mean ${formatMs(s["mean_itl_ms"])}`,
    },
    {
      label: "Output throughput",
      value: `${formatNumber(s["output_throughput_tok_s"])} tok/s`,
      detail: `${formatNumber(s["total_output_tokens"])} tokens`,
    },
  ];
  return out;
}

/** What the run cost (docs/cost.md); none for a file without cost keys. */
function costKpi(model: ReportModel): Kpi[] {
  const c = model.fleet.cost;
  if (c === null) return [];
  const per: string[] = [];
  if (c.perMillionOutputTokens !== null) per.push(`$${usd(c.perMillionOutputTokens)} / 1M output tokens`);
  if (c.perGoodRequest !== null) per.push(`$${usd(c.perGoodRequest)} / good request`);
  return [{ label: "Cost", value: `$${usd(c.usd)}`, detail: per.join(" · ") || "at cost.usd_per_gpu_hour" }];
}

function provisionedKpi(model: ReportModel): Kpi {
  const f = model.fleet;
  const detail = [`mean ${formatNumber(f.meanGpus)}`];
  if (f.budget !== null) detail.push(`budget ${f.budget}`);
  if (f.scaling !== null) detail.push(`${formatNumber(f.scaling.total)} scaling events`);
  return {
    label: "Provisioned GPUs",
    value: f.peakGpus === null ? "—" : `peak ${formatNumber(f.peakGpus)}`,
    detail: detail.join(" · "),
    ...(f.overBudget === null ? {} : { alert: true }),
  };
}

/**
 * Warnings shown above the charts: a GPU system without measured tables, provisioned GPUs above
 * the budget, a saturated run.
 */
export function fleetAlerts(model: ReportModel): string[] {
  const out: string[] = [];
  for (const h of model.fleet.hardware) {
    if (h.tier !== "estimated") continue;
    out.push(
      `${h.gpu} has no measured op tables: its timing is estimated (${h.basis}), not calibrated. ` +
        "Read its latencies and throughput as estimates.",
    );
  }
  const o = model.fleet.overBudget;
  if (o !== null) {
    out.push(
      `Provisioned GPUs exceed the Planner's budget of ${formatNumber(o.budget)} GPUs (max_num_gpus): from ` +
        `${formatDuration(o.firstAtMs)} of simulated time, for ${formatDuration(o.durationMs)} in all, ` +
        `peak ${formatNumber(o.peakGpus)} GPUs. Starting and draining workers hold GPUs too, and count in GPU-hours.`,
    );
  }
  const sat = model.fleet.saturation;
  if (sat !== null) {
    out.push(
      `The run is saturated: the queue was still growing at the last arrival (+${formatNumber(Math.round(sat.growth))} ` +
        `requests over the last ${formatDuration(sat.windowMs)} of arrivals, ` +
        `${formatNumber(sat.backlogAtLastArrival)} waiting or running then). The fleet cannot keep up with this ` +
        "traffic, so its latencies depend on how long the trace is.",
    );
  }
  return out;
}

function workerSeconds(s: Record<string, number>): string {
  const prefill = s["prefill_worker_seconds"] ?? 0;
  const decode = s["decode_worker_seconds"];
  if (decode === undefined) return "";
  const hours = (sec: number): string => `${formatNumber(sec / 3600)} worker-h`;
  return prefill > 0 ? `prefill ${hours(prefill)} · decode ${hours(decode)}` : hours(decode);
}

/** Distribution metrics of the summary: one row each, one column per statistic. */
const DISTRIBUTIONS: { key: string; label: string }[] = [
  { key: "ttft_ms", label: "Time to first token (ms)" },
  { key: "ttst_ms", label: "Time to second token (ms)" },
  { key: "e2e_latency_ms", label: "Request latency (ms)" },
  { key: "itl_ms", label: "Inter-token latency (ms)" },
  { key: "tpot_ms", label: "Time per output token (ms)" },
  { key: "output_token_throughput_per_user", label: "Output tokens/s per user" },
];
/** The summary's statistics by key prefix; the median is labelled as the percentile it is. */
const STATS: { prefix: string; label: string }[] = [
  "mean",
  "min",
  "median",
  "p75",
  "p90",
  "p95",
  "p99",
  "max",
  "std",
].map((prefix) => ({ prefix, label: prefix === "median" ? "p50" : prefix }));

/** What a retune score measures, per objective (seed 003 "Scoring and Outcomes", docs/retune.md). */
const OBJECTIVE_UNITS: Record<string, { what: string; unit: string; better: "higher" | "lower" }> = {
  Goodput: { what: "SLA-good output tokens per window second", unit: "tok/s", better: "higher" },
  GoodputPerGPU: {
    what: "SLA-good output tokens per window second per average GPU",
    unit: "tok/s/GPU",
    better: "higher",
  },
  Throughput: { what: "output tokens per second of the replay", unit: "tok/s", better: "higher" },
  ThroughputPerGPU: {
    what: "output tokens per second of the replay per average GPU",
    unit: "tok/s/GPU",
    better: "higher",
  },
  ThroughputPerUser: { what: "mean output tokens per second per user", unit: "tok/s/user", better: "higher" },
  TTFT: { what: "mean time to first token", unit: "ms", better: "lower" },
  E2ELatency: { what: "mean request latency", unit: "ms", better: "lower" },
};

/**
 * Retune decisions (docs/retune.md §10) as one table, or "" without retune.
 * A run that retuned but made no decision gets a line saying so.
 */
export function retuneTableHtml(model: ReportModel): string {
  const rows = model.planner?.retune;
  if (rows === undefined || rows === null) return "";
  if (rows.length === 0) {
    return '<p class="muted">Retune made no decision in this run (the replay is shorter than one window plus grace_seconds).</p>';
  }
  const cell = (v: string): string => `<td>${escapeHtml(v)}</td>`;
  const num = (v: number | null): string => (v === null ? "—" : formatNumber(v));
  // Scores close to each other decide outcomes: six significant digits, not the usual four.
  const score = (v: number | null): string =>
    v === null ? "—" : Number(v.toPrecision(6)).toLocaleString("en-US", { maximumFractionDigits: 6 });
  const body = rows
    .map((r) => {
      const window =
        r.windowStartS === null || r.windowEndS === null
          ? num(r.window)
          : `${num(r.window)} (${formatNumber(r.windowStartS)}–${formatNumber(r.windowEndS)} s)`;
      const outcome = r.reason === null ? r.outcome : `${r.outcome}: ${r.reason}`;
      return (
        `<tr>${cell(window)}<td><span class="outcome outcome-${escapeHtml(r.outcome)}">${escapeHtml(outcome)}</span></td>` +
        `${cell(num(r.decidedAtS))}${cell(num(r.requests))}${cell(num(r.candidates))}` +
        `${cell(r.chosenRouter === null || r.chosenRouter === "" ? "—" : r.chosenRouter)}` +
        `${cell(r.plannerChanges === "" ? "—" : r.plannerChanges)}` +
        `${cell(score(r.baselineScore))}${cell(score(r.bestScore))}${cell(num(r.sweepWallS))}</tr>`
      );
    })
    .join("");
  const objective = model.run?.planner?.retuneObjective ?? null;
  const unit = objective === null ? null : (OBJECTIVE_UNITS[objective] ?? null);
  const scoreHead = (which: string): string =>
    objective === null
      ? `${which} score`
      : `${which} score (${objective}${unit === null ? "" : `, ${unit.unit}`})`;
  const head = [
    "Window",
    "Outcome",
    "Decided at (s)",
    "Requests",
    "Candidates",
    "Chosen router parameters",
    "Planner changes",
    scoreHead("Baseline"),
    scoreHead("Best"),
    "Sweep wall time (host s)",
  ]
    .map((h) => `<th scope="col">${escapeHtml(h)}</th>`)
    .join("");
  const caption =
    objective === null
      ? "Scores are in the units of the run's retune objective (not recorded in this prediction.json)."
      : `Scores: ${objective}${unit === null ? "" : ` — ${unit.what}, ${unit.unit}; ${unit.better} is better`}.`;
  return (
    `<p class="muted">${escapeHtml(caption)} Sweep wall time is host time: how long the sweep took on the machine ` +
    "that ran the simulation, not simulated time.</p>" +
    `<div class="table-wrap"><table class="metrics retune"><thead><tr>${head}</tr></thead>` +
    `<tbody>${body}</tbody></table></div>`
  );
}

/** The summary as two tables: distributions, then every other key of `summary` by its name. */
export function summaryTablesHtml(model: ReportModel): string {
  const s = model.summary;
  const used = new Set<string>();
  const rows: string[] = [];
  for (const d of DISTRIBUTIONS) {
    const keys = STATS.map((st) => `${st.prefix}_${d.key}`);
    if (!keys.some((k) => k in s)) continue;
    for (const k of keys) used.add(k);
    const cells = keys.map((k) => `<td>${formatNumber(s[k])}</td>`).join("");
    rows.push(`<tr><th scope="row">${escapeHtml(d.label)}</th>${cells}</tr>`);
  }
  const head = STATS.map((st) => `<th scope="col">${st.label}</th>`).join("");
  const distributions =
    rows.length === 0
      ? ""
      : `<div class="table-wrap"><table class="metrics"><thead><tr><th scope="col">Metric</th>${head}</tr></thead>` +
        `<tbody>${rows.join("")}</tbody></table></div>`;
  const hostKeys: readonly string[] = HOST_TIME_KEYS;
  const keys = Object.keys(s)
    .filter((k) => !used.has(k))
    .sort();
  const row = (k: string, host: boolean): string =>
    `<div class="kv"><code>${escapeHtml(k)}</code>${host ? '<em class="host">host</em>' : ""}<span>${formatNumber(s[k])}</span></div>`;
  const rest = keys
    .filter((k) => !hostKeys.includes(k))
    .map((k) => row(k, false))
    .join("");
  const host = keys.filter((k) => hostKeys.includes(k));
  const scalars = rest === "" ? "" : `<div class="kv-grid">${rest}</div>`;
  const hostHtml =
    host.length === 0
      ? ""
      : '<h3 class="host-head">Host speed (measured on the machine that ran the simulation; differs from run to run)</h3>' +
        `<div class="kv-grid">${host.map((k) => row(k, true)).join("")}</div>`;
  return distributions + scalars + hostHtml;
}
