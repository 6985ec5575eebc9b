/**
 * `ReplayReport`: what the API functions return — the prediction as typed fields, and `toDict()`
 * / `toJson()` giving exactly the document `fleetsim predict` writes as prediction.json.
 */
import type { TimeseriesReport } from "../metrics/timeline.js";
import type {
  BootstrapInfo,
  LifecycleOperation,
  PlannerMetadata,
  PlannerReport,
  PlannerTick,
  ScalingEvent,
} from "../output/planner.js";
import type { RetuneEvent } from "../output/retune.js";
import type { Summary } from "../output/summary.js";
import { stableStringify } from "../report/json.js";
import type { PerRequestRecord } from "../report/perRequest.js";
import type { Prediction } from "../report/prediction.js";
import type { RunInfo } from "../report/runInfo.js";

export type { BootstrapInfo, LifecycleOperation, PerRequestRecord, RunInfo, ScalingEvent, TimeseriesReport };

/** `summary` of prediction.json: every metric key → its value (docs/metrics.md; src/output/summary.ts). */
export type ReplaySummary = Readonly<Summary>;

/** `coverage` of prediction.json: which details the run captured. */
export interface ReplayCoverage {
  readonly capture_per_request: boolean;
  readonly capture_planner_details: boolean;
  readonly capture_canonical_evidence: boolean;
  readonly per_request_records: number;
}

/** `planner` of prediction.json (seed 000 "Read the Results"), with the HTML report's path. */
export interface ReplayPlannerReport {
  /** `mode`, `advisory`, `planner_config_digest`, `planner_config`, the plugin pipeline, `bootstrap`, `details_captured`. */
  readonly metadata: Readonly<PlannerMetadata>;
  readonly scaling_events: readonly ScalingEvent[];
  /** Empty when `capturePlannerDetails` is false. */
  readonly lifecycle_operations: readonly LifecycleOperation[];
  /** One record per Planner tick; empty when `capturePlannerDetails` is false. */
  readonly ticks: readonly PlannerTick[];
  readonly total_ticks: number;
  /** The HTML report written by this call, or null. */
  readonly html_report_path: string | null;
  /** Advisory mode only: the changes the Planner recommended. */
  readonly recommended_scaling_events?: readonly ScalingEvent[];
  /** With `retune`: every decision (docs/retune.md §10). */
  readonly retune_events?: readonly RetuneEvent[];
}

/** The object prediction.json holds (keys sorted at every level, non-finite numbers as null). */
export type PredictionDict = Record<string, unknown>;

/** The document before `toDict`'s normalization; `planner` may carry an HTML report path. */
export type PredictionDocument = Omit<Prediction, "planner"> & { planner: ReplayPlannerReportData | null };

/** The planner object as built (mutable arrays), before it is exposed read-only. */
export type ReplayPlannerReportData = Omit<PlannerReport, "html_report_path"> & {
  html_report_path: string | null;
};

export class ReplayReport {
  readonly summary: ReplaySummary;
  /** One record per request with `capturePerRequest`, else null. */
  readonly perRequest: readonly PerRequestRecord[] | null;
  readonly coverage: ReplayCoverage;
  /** Null without a Planner. */
  readonly planner: ReplayPlannerReport | null;
  /** fleetsim extension: latency, throughput and worker state over time. */
  readonly timeseries: TimeseriesReport;
  /** fleetsim extension: what was simulated (deployment, router, Planner, traffic; docs/metrics.md). */
  readonly run: RunInfo;

  constructor(private readonly document: PredictionDocument) {
    this.summary = document.summary;
    this.perRequest = document.per_request;
    this.coverage = document.coverage;
    this.planner = document.planner as ReplayPlannerReport | null;
    this.timeseries = document.timeseries;
    this.run = document.run;
  }

  /**
   * prediction.json as an object: a fresh copy per call, keys sorted at every level, non-finite
   * numbers as null, so `JSON.stringify(report.toDict(), null, 2) + "\n"` is the file's text.
   */
  toDict(): PredictionDict {
    return JSON.parse(this.toJson()) as PredictionDict;
  }

  /** prediction.json's text, byte for byte as `fleetsim predict` writes it. */
  toJson(): string {
    return `${stableStringify(this.document)}\n`;
  }
}
