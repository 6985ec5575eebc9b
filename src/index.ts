/**
 * fleetsim's library API (docs/api.md): replay traces or synthetic traffic through simulated
 * vLLM-like engines, routers and the Dynamo Planner from code, with the reference's Python
 * arguments in camelCase. Everything here is also reachable through `fleetsim predict`.
 */

export type {
  CommonReplayOptions,
  EngineArgs,
  EngineArgsInput,
  ExternalTimingConfig,
  PlannerConfig,
  PredictOptions,
  RouterConfig,
  SyntheticReplayOptions,
  TimingModelArgs,
  TraceReplayOptions,
} from "./api/options.js";
export { predict, runSyntheticTraceReplay, runTraceReplay } from "./api/replay.js";
export {
  type BootstrapInfo,
  type LifecycleOperation,
  type PerRequestRecord,
  type PredictionDict,
  type ReplayCoverage,
  type ReplayPlannerReport,
  ReplayReport,
  type ReplaySummary,
  type RunInfo,
  type ScalingEvent,
  type TimeseriesReport,
} from "./api/report.js";
export { ConfigError, type ConfigIssue } from "./config/errors.js";
export type { TraceFormat } from "./config/traceFormats.js";
export { type HtmlReportOptions, renderHtmlReport, writeHtmlReport } from "./report/html/index.js";
export type { Prediction } from "./report/prediction.js";
export { ReplayAborted } from "./sim/replay.js";
export { TraceError } from "./traffic/traceError.js";
