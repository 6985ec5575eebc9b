/**
 * A small prediction document following the data contract of prediction.json (`timeseries`,
 * `planner` with ticks), for report tests that must not depend on a replay's exact numbers.
 */
import type { Prediction } from "../../src/report/prediction.js";

export interface FixtureOptions {
  planner?: boolean;
  timeseries?: boolean;
  /** Buckets of the time series (1 s each). */
  buckets?: number;
}

export function fixturePrediction(opts: FixtureOptions = {}): Prediction {
  const { planner = true, timeseries = true, buckets = 60 } = opts;
  const n = buckets;
  const idx = Array.from({ length: n }, (_, i) => i);
  // Requests arrive from bucket 0; bucket 7 has none (null percentiles).
  const pct = (base: number) => idx.map((i) => (i === 7 ? null : base + (i % 10)));
  const doc: Record<string, unknown> = {
    summary: {
      num_requests: 600,
      completed_requests: 590,
      goodput_completed_requests: 500,
      goodput_request_throughput_rps: 8.3,
      request_throughput_rps: 9.8,
      output_throughput_tok_s: 1200.5,
      total_output_tokens: 72_000,
      gpu_hours: 0.05,
      duration_ms: n * 1000,
      mean_ttft_ms: 120,
      median_ttft_ms: 100,
      p99_ttft_ms: 900,
      min_ttft_ms: 10,
      max_ttft_ms: 1000,
      mean_itl_ms: 12,
      median_itl_ms: 11,
      p99_itl_ms: 40,
      prefill_gpus_per_worker: 1,
      decode_gpus_per_worker: 2,
      prefill_worker_seconds: 60,
      decode_worker_seconds: 90,
      wall_time_ms: 321,
    },
    per_request: null,
    planner: null,
    coverage: {
      capture_per_request: false,
      capture_planner_details: planner,
      capture_canonical_evidence: false,
      per_request_records: 0,
    },
  };
  if (timeseries) {
    doc["timeseries"] = {
      interval_ms: 1000,
      t_ms: idx.map((i) => i * 1000),
      arrivals: idx.map((i) => 10 + (i % 3)),
      completions: idx.map((i) => (i === 0 ? 0 : 10)),
      output_tokens: idx.map(() => 1200),
      ttft_ms: { p50: pct(100), p90: pct(300), p99: pct(800) },
      itl_ms: { p50: pct(10), p90: pct(20), p99: pct(35) },
      active_workers: { prefill: idx.map(() => 1), decode: idx.map((i) => (i < 25 ? 1 : 2)) },
      workers: [
        {
          role: "prefill",
          worker_id: 0,
          queue_depth: idx.map((i) => i % 4),
          running: idx.map(() => 2),
          kv_utilization: idx.map(() => 0.25),
        },
        {
          role: "decode",
          worker_id: 0,
          queue_depth: idx.map(() => 0),
          running: idx.map(() => 8),
          kv_utilization: idx.map((i) => (i % 10) / 10),
        },
        {
          role: "decode",
          worker_id: 1,
          queue_depth: idx.map((i) => (i < 25 ? null : 1)),
          running: idx.map((i) => (i < 25 ? null : 4)),
          kv_utilization: idx.map((i) => (i < 25 ? null : 0.5)),
        },
      ],
    };
  }
  if (planner) {
    const ticks = [10, 20, 30, 40, 50].map((s, ordinal) => ({
      at_ms: s * 1000,
      ordinal,
      topology: {
        prefill: topo(1, 0),
        decode: s < 20 ? topo(1, 0) : s < 30 ? topo(1, 1) : topo(2, 0),
      },
      input:
        s === 30
          ? {
              now_s: s,
              traffic: { duration_s: 30, num_req: 300, isl: 4000, osl: 120, kv_hit_rate: 0.2 },
            }
          : { now_s: s, traffic: null },
      effects: {
        diagnostics:
          s === 30
            ? {
                predicted_num_req: 330,
                predicted_isl: 4100,
                predicted_osl: 118,
                throughput_lower_bound_prefill: 1,
                throughput_lower_bound_decode: 2,
              }
            : { load_decision_reason: "no_change" },
        scale_to: null,
      },
    }));
    doc["planner"] = {
      metadata: {
        mode: "disagg",
        advisory: false,
        planner_config: {
          mode: "disagg",
          ttft_ms: 500,
          itl_ms: 40,
          load_predictor: "arima",
          enable_load_scaling: true,
          enable_throughput_scaling: true,
          throughput_adjustment_interval_seconds: 30,
        },
      },
      scaling_events: [{ at_s: 20, component: "decode", from_count: 1, to_count: 2, reason: "scale_up" }],
      lifecycle_operations: [],
      ticks,
      total_ticks: ticks.length,
      html_report_path: null,
    };
  }
  return doc as unknown as Prediction;
}

function topo(active: number, starting: number) {
  return {
    active: Array.from({ length: active }, (_, i) => i),
    active_count: active,
    draining: [],
    draining_count: 0,
    starting: [],
    starting_count: starting,
  };
}

/** The chart payload the page renders from (the JSON in `<script id="fleetsim-data">`). */
export interface ReportPayload {
  timeUnit: string;
  charts: { id: string; title: string; option: { series: { name: string; data: unknown[] }[] } }[];
}

export function payloadOf(html: string): ReportPayload {
  const m = /<script type="application\/json" id="fleetsim-data">([\s\S]*?)<\/script>/.exec(html);
  if (m === null) throw new Error("no fleetsim-data payload in the page");
  return JSON.parse(m[1]) as ReportPayload;
}

/**
 * Everything in the page that would make a browser fetch something: src/href attributes and CSS
 * url()/@import with a URL scheme or protocol-relative address, and <link>/<iframe> elements.
 */
export function externalReferences(html: string): string[] {
  const patterns = [
    /\b(?:src|href|action|poster|srcset)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?\/\/[^\s"'>]*/gi,
    /url\(\s*["']?\s*(?:[a-z][a-z0-9+.-]*:)?\/\/[^)]*\)/gi,
    /@import\b[^;]*/gi,
    /<link\b[^>]*>/gi,
    /<iframe\b[^>]*>/gi,
    /<script\b[^>]*\bsrc\s*=[^>]*>/gi,
  ];
  return patterns.flatMap((p) => html.match(p) ?? []);
}

/** Every chart of a run with a throughput-scaling Planner, in page order. */
export const PLANNER_CHARTS = [
  "replicas",
  "gpus",
  "ttft",
  "itl",
  "throughput",
  "load-rate",
  "load-lengths",
  "queue-depth",
  "kv-utilization",
];

/** The same for a run with an SLA: the SLA attainment chart follows the throughput chart. */
export const PLANNER_CHARTS_WITH_SLA = PLANNER_CHARTS.flatMap((id) =>
  id === "throughput" ? [id, "sla-attainment"] : [id],
);
