/**
 * The library API's entry points (docs/api.md). Each call translates its options into the
 * YAML-shaped config `fleetsim predict` reads, loads it through predict's validation and runs it
 * through predict's run path (`runPrediction`), so results are those of the equivalent YAML.
 * Host-resource supervision (`execution.resources`) is the CLI's: the API runs in the caller's
 * process and leaves limits to it.
 */
import { resolve } from "node:path";
import type { RunSpec } from "../config/runSpec.js";
import { runPrediction } from "../pipeline/run.js";
import { writeHtmlReport } from "../report/html/index.js";
import { ReplayAborted } from "../sim/replay.js";
import { TraceError } from "../traffic/traceError.js";
import { defaultReportPath } from "./htmlReport.js";
import { OptionIssues } from "./issues.js";
import { loadConfigObject } from "./loadConfigObject.js";
import type { PredictOptions, SyntheticReplayOptions, TraceReplayOptions } from "./options.js";
import type { PlannerTargets } from "./plannerConfig.js";
import { type PredictionDocument, ReplayReport } from "./report.js";
import { type Translation, translateSyntheticReplay, translateTraceReplay } from "./translate.js";

/**
 * Replays a Mooncake trace (one file) or a Dynamo request trace (files, directories of shards,
 * patterns), optionally with the Planner in the loop. Relative paths resolve against the working
 * directory. Rejects with ConfigError (bad options), TraceError (bad trace), ReplayAborted.
 */
export async function runTraceReplay(
  tracePaths: string | readonly string[],
  options: TraceReplayOptions = {},
): Promise<ReplayReport> {
  const baseDir = process.cwd();
  const translation = translateTraceReplay(tracePaths, options, baseDir);
  return runTranslated("runTraceReplay", translation, options, baseDir);
}

/** Replays synthetic traffic: fixed input/output lengths, Poisson, constant or closed-loop arrivals. */
export async function runSyntheticTraceReplay(options: SyntheticReplayOptions): Promise<ReplayReport> {
  const baseDir = process.cwd();
  const translation = translateSyntheticReplay(options, baseDir);
  return runTranslated("runSyntheticTraceReplay", translation, options, baseDir);
}

/**
 * Runs a config object shaped like the YAML of `fleetsim predict` (the document, not a file
 * path); relative paths in it resolve against `options.baseDir` (default: working directory).
 */
export async function predict(
  config: Readonly<Record<string, unknown>>,
  options: PredictOptions = {},
): Promise<ReplayReport> {
  const baseDir = resolve(options.baseDir ?? process.cwd());
  const spec = loadConfigObject(config, { label: "predict", baseDir, stack: options.stack ?? "dynamo" });
  return execute(spec, {
    capturePerRequest: options.capturePerRequest ?? false,
    capturePlannerDetails: true,
    htmlReportPath: options.htmlReportPath === undefined ? null : resolve(baseDir, options.htmlReportPath),
    signal: options.signal,
  });
}

async function runTranslated(
  label: string,
  translation: Translation,
  options: TraceReplayOptions | SyntheticReplayOptions,
  baseDir: string,
): Promise<ReplayReport> {
  const { draft } = translation;
  const loaded = loadConfigObject(draft.doc, {
    label,
    baseDir,
    stack: "dynamo",
    place: (issue) => draft.placeIssue(issue),
  });
  const spec = withPlannerTargets(label, loaded, translation.plannerTargets, translation.identified);
  const capturePlannerDetails = options.capturePlannerDetails ?? true;
  try {
    return await execute(spec, {
      capturePerRequest: options.capturePerRequest ?? false,
      capturePlannerDetails,
      htmlReportPath: reportPath(label, translation, options, capturePlannerDetails, baseDir),
      signal: options.signal,
    });
  } catch (err) {
    // A trace error may name the config setting an option became (`traffic.source.block_size`):
    // said with the option's name instead (`traceBlockSize`), like the config errors.
    if (err instanceof TraceError) err.message = draft.renameMessage(err.message);
    throw err;
  }
}

/**
 * Whether and where the HTML report goes. With a Planner: as PlannerConfig says
 * (`report_interval_hours`, default on), never without planner details (the reference's
 * `capture_planner_details=False`). Without one: only when `htmlReportPath` asks for it.
 */
function reportPath(
  label: string,
  translation: Translation,
  options: TraceReplayOptions | SyntheticReplayOptions,
  capturePlannerDetails: boolean,
  baseDir: string,
): string | null {
  const planner = options.plannerConfig !== undefined && options.plannerConfig !== null;
  const wanted = planner
    ? translation.writeReport && capturePlannerDetails
    : options.htmlReportPath !== undefined;
  if (options.htmlReportPath !== undefined && !wanted) {
    const issues = new OptionIssues(label);
    issues.add(
      "htmlReportPath",
      translation.writeReport
        ? "no HTML report is written with capturePlannerDetails: false; drop htmlReportPath or capture the details"
        : "no HTML report is written with plannerConfig.report_interval_hours: null; drop one of them",
    );
    issues.throwIfAny();
  }
  if (!wanted) return null;
  return options.htmlReportPath === undefined
    ? defaultReportPath(baseDir)
    : resolve(baseDir, options.htmlReportPath);
}

interface ExecuteOptions {
  readonly capturePerRequest: boolean;
  readonly capturePlannerDetails: boolean;
  readonly htmlReportPath: string | null;
  readonly signal: AbortSignal | undefined;
}

async function execute(spec: RunSpec, opts: ExecuteOptions): Promise<ReplayReport> {
  const { signal } = opts;
  if (signal?.aborted) throw new ReplayAborted();
  let detach = (): void => {};
  let outcome: Awaited<ReturnType<typeof runPrediction>>;
  try {
    outcome = await runPrediction(
      spec,
      { capturePerRequest: opts.capturePerRequest },
      {
        onStart: (replay) => {
          if (signal === undefined) return;
          if (signal.aborted) replay.abort();
          const onAbort = (): void => replay.abort();
          signal.addEventListener("abort", onAbort, { once: true });
          detach = () => signal.removeEventListener("abort", onAbort);
        },
      },
    );
  } finally {
    detach();
  }
  let document: PredictionDocument = outcome.prediction;
  if (!opts.capturePlannerDetails) document = withoutPlannerDetails(document);
  if (opts.htmlReportPath !== null) {
    const sla = spec.sla;
    await writeHtmlReport(outcome.prediction, opts.htmlReportPath, {
      ...(sla === null
        ? {}
        : {
            sla: {
              ...(sla.ttftMs === null ? {} : { ttftMs: sla.ttftMs }),
              ...(sla.itlMs === null ? {} : { itlMs: sla.itlMs }),
            },
          }),
    });
    if (document.planner !== null) {
      document = { ...document, planner: { ...document.planner, html_report_path: opts.htmlReportPath } };
    }
  }
  return new ReplayReport(document);
}

/**
 * The reference's `capture_planner_details=False`: no `ticks` or `lifecycle_operations` (empty
 * lists, so the keys keep their types); `scaling_events`, `total_ticks`, `metadata` and
 * `retune_events` stay.
 */
function withoutPlannerDetails(document: PredictionDocument): PredictionDocument {
  const planner = document.planner;
  if (planner === null)
    return { ...document, coverage: { ...document.coverage, capture_planner_details: false } };
  return {
    ...document,
    planner: {
      ...planner,
      ticks: [],
      lifecycle_operations: [],
      metadata: { ...planner.metadata, details_captured: false },
    },
    coverage: { ...document.coverage, capture_planner_details: false },
  };
}

/**
 * What the Python API's Planner differs in from the YAML's: its own latency targets
 * (PlannerConfig `ttft_ms` / `itl_ms`) in place of the ones the YAML mapping derives from
 * `evaluation.sla` (plannerConfig.ts), an explicit `scheduling.scale_interval_seconds`, and no
 * perf-model bootstrap when the engine arguments name no model and GPU (`not_configured_load_only`,
 * seed 000 "Run from Python").
 */
function withPlannerTargets(
  label: string,
  spec: RunSpec,
  targets: PlannerTargets | null,
  identified: boolean,
): RunSpec {
  const planner = spec.planner;
  if (planner === null || targets === null) return spec;
  const scale = targets.scaleIntervalS;
  if (scale !== null) checkScaleInterval(label, planner, scale);
  const sameTargets = planner.ttftMs === targets.ttftMs && planner.itlMs === targets.itlMs;
  if (sameTargets && identified && (scale === null || scale === planner.scaleIntervalS)) return spec;
  return {
    ...spec,
    planner: {
      ...planner,
      ttftMs: targets.ttftMs,
      itlMs: targets.itlMs,
      ...(scale === null ? {} : { scaleIntervalS: scale }),
      ...(identified ? {} : { bootstrapPerfModel: false }),
    },
  };
}

/**
 * PlannerConfig's rule for an explicit `scheduling.scale_interval_seconds` (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`): it
 * must divide every enabled adjustment interval (the load interval in retune-only mode).
 */
function checkScaleInterval(label: string, planner: NonNullable<RunSpec["planner"]>, scale: number): void {
  const retuneOnly = planner.retune?.retuneOnly === true;
  const enabled: [string, number][] = [];
  if (planner.enableLoadScaling || retuneOnly) {
    enabled.push(["load_adjustment_interval_seconds", planner.loadAdjustmentIntervalS]);
  }
  if (planner.enableThroughputScaling) {
    enabled.push(["throughput_adjustment_interval_seconds", planner.throughputAdjustmentIntervalS]);
  }
  const issues = new OptionIssues(label);
  for (const [key, seconds] of enabled) {
    const ratio = seconds / scale;
    if (Math.abs(ratio - Math.round(ratio)) > 1e-9 * Math.max(1, Math.abs(ratio))) {
      issues.add(
        "plannerConfig.scheduling.scale_interval_seconds",
        `(${scale}) must divide every enabled adjustment interval; ${key} is ${seconds}`,
      );
    }
  }
  issues.throwIfAny();
}
