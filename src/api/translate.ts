/**
 * Replay options → the YAML-shaped config `fleetsim predict` reads (docs/api.md "How options map
 * to the config"). Nothing here simulates: the config goes through predict's validation and run
 * path, so an API call and `fleetsim predict` with the equivalent YAML give the same prediction.
 */
import { isMapping } from "../config/mapping.js";
import { ConfigDraft } from "./configDraft.js";
import { type RoleInput, translateEngine } from "./engineArgs.js";
import { OptionIssues, show } from "./issues.js";
import { optionKeys } from "./optionKeys.js";
import type {
  CommonReplayOptions,
  RouterConfig,
  SyntheticReplayOptions,
  TraceReplayOptions,
} from "./options.js";
import { type PlannerTargets, readPlannerConfig, translatePlanner } from "./plannerConfig.js";

export interface Translation {
  readonly draft: ConfigDraft;
  /** PlannerConfig asks for the HTML report (report_interval_hours not null). */
  readonly writeReport: boolean;
  /** The Planner's latency targets, to apply to the resolved Planner settings; null = none to apply. */
  readonly plannerTargets: PlannerTargets | null;
  /** Every role's engine arguments name its model and GPU (the Planner's perf-model bootstrap needs it). */
  readonly identified: boolean;
}

/** Options of either function that are not the workload's. */
const COMMON_KEYS = optionKeys<CommonReplayOptions>()([
  "extraEngineArgs",
  "prefillEngineArgs",
  "decodeEngineArgs",
  "numWorkers",
  "numPrefillWorkers",
  "numDecodeWorkers",
  "routerMode",
  "routerConfig",
  "replayMode",
  "modelName",
  "plannerConfig",
  "slaTtftMs",
  "slaItlMs",
  "slaE2eMs",
  "capturePlannerDetails",
  "capturePerRequest",
  "htmlReportPath",
  "signal",
]);

export const TRACE_KEYS = optionKeys<TraceReplayOptions>()([
  ...COMMON_KEYS,
  "traceFormat",
  "traceBlockSize",
  "replayConcurrency",
  "arrivalSpeedupRatio",
  "maxSimTimeMs",
]);

export const SYNTHETIC_KEYS = optionKeys<SyntheticReplayOptions>()([
  ...COMMON_KEYS,
  "inputTokens",
  "outputTokens",
  "requestCount",
  "requestRate",
  "arrivalSeed",
  "arrivalIntervalMs",
  "replayConcurrency",
]);

export function translateTraceReplay(
  tracePaths: string | readonly string[],
  options: TraceReplayOptions,
  baseDir: string,
): Translation {
  const issues = new OptionIssues("runTraceReplay");
  const draft = new ConfigDraft();
  checkKeys(options, TRACE_KEYS, issues);
  const format = options.traceFormat ?? "mooncake";
  const paths = typeof tracePaths === "string" ? [tracePaths] : [...tracePaths];
  draft.set(["traffic", "source", "type"], "trace", "tracePaths");
  draft.set(["traffic", "source", "format"], format, "traceFormat");
  draft.set(["traffic", "source", "paths"], paths, "tracePaths");
  if (options.traceBlockSize !== undefined) {
    draft.set(["traffic", "source", "block_size"], options.traceBlockSize, "traceBlockSize");
  }
  if (options.replayConcurrency !== undefined) {
    if (options.arrivalSpeedupRatio !== undefined) {
      issues.add(
        "arrivalSpeedupRatio",
        "applies to trace timestamps; replayConcurrency ignores them, set only one",
      );
    }
    // Type and value set apart, so an issue with the value is at the option itself.
    draft.set(["traffic", "load", "type"], "concurrency", "replayConcurrency");
    draft.set(["traffic", "load", "concurrency"], options.replayConcurrency, "replayConcurrency");
  } else {
    draft.set(["traffic", "load", "type"], "trace_timestamps", "arrivalSpeedupRatio");
    draft.set(["traffic", "load", "speedup"], options.arrivalSpeedupRatio ?? 1.0, "arrivalSpeedupRatio");
  }
  if (options.maxSimTimeMs !== undefined) {
    const ms = options.maxSimTimeMs;
    draft.set(
      ["traffic", "stop", "max_virtual_time_seconds"],
      typeof ms === "number" ? ms / 1000 : ms,
      "maxSimTimeMs",
    );
  }
  const common = translateCommon(options, draft, issues, baseDir, (retune) =>
    checkTraceForRetune(options, format, retune, issues),
  );
  issues.throwIfAny();
  return { draft, ...common };
}

export function translateSyntheticReplay(options: SyntheticReplayOptions, baseDir: string): Translation {
  const issues = new OptionIssues("runSyntheticTraceReplay");
  const draft = new ConfigDraft();
  checkKeys(options, SYNTHETIC_KEYS, issues);
  draft.set(["traffic", "source", "type"], "synthetic", "inputTokens");
  draft.set(["traffic", "source", "input_tokens"], options.inputTokens, "inputTokens");
  draft.set(["traffic", "source", "output_tokens"], options.outputTokens, "outputTokens");
  draft.set(["traffic", "stop", "requests"], options.requestCount, "requestCount");
  const arrivals = (["requestRate", "arrivalIntervalMs", "replayConcurrency"] as const).filter(
    (k) => options[k] !== undefined,
  );
  if (arrivals.length !== 1) {
    issues.add(
      arrivals[1] ?? "requestRate",
      `synthetic traffic needs exactly one of requestRate, arrivalIntervalMs or replayConcurrency, got ${arrivals.length === 0 ? "none" : arrivals.join(", ")}`,
    );
  } else if (options.requestRate !== undefined) {
    draft.set(["traffic", "load", "type"], "poisson", "requestRate");
    draft.set(["traffic", "load", "requests_per_second"], options.requestRate, "requestRate");
    draft.set(["traffic", "load", "seed"], options.arrivalSeed ?? 42, "arrivalSeed");
  } else if (options.arrivalIntervalMs !== undefined) {
    const ms = options.arrivalIntervalMs;
    if (typeof ms !== "number" || !(ms > 0) || !Number.isFinite(ms)) {
      issues.add("arrivalIntervalMs", `must be a positive number of milliseconds, got ${show(ms)}`);
    } else {
      // The AISimulate lowering's inverse: constant_rate at 1000 / interval requests per second.
      draft.set(["traffic", "load", "type"], "constant_rate", "arrivalIntervalMs");
      draft.set(["traffic", "load", "requests_per_second"], 1000 / ms, "arrivalIntervalMs");
    }
  } else {
    draft.set(["traffic", "load", "type"], "concurrency", "replayConcurrency");
    draft.set(["traffic", "load", "concurrency"], options.replayConcurrency, "replayConcurrency");
  }
  if (options.arrivalSeed !== undefined && options.requestRate === undefined) {
    issues.add("arrivalSeed", "seeds Poisson arrivals; it needs requestRate");
  }
  const common = translateCommon(options, draft, issues, baseDir, (retune) =>
    issues.add(
      retune,
      "synthetic traffic cannot be retuned: retune replays windows of a Dynamo request trace on its timestamps",
      {
        hint:
          'call runTraceReplay(tracePaths, { traceFormat: "dynamo", … }) with the same plannerConfig; ' +
          "`fleetsim convert` turns a Mooncake trace into a Dynamo one",
      },
    ),
  );
  issues.throwIfAny();
  return { draft, ...common };
}

/**
 * Retune's traffic requirements (seed 000 "Requirements"), said in runTraceReplay's own options:
 * the config's rules would name traffic.source and traffic.load, which the caller never wrote.
 */
function checkTraceForRetune(
  options: TraceReplayOptions,
  format: unknown,
  retune: string,
  issues: OptionIssues,
): void {
  if (format !== "dynamo") {
    issues.add(
      "traceFormat",
      `${retune} needs a Dynamo request trace: set traceFormat: "dynamo" (got ${show(format)}); ` +
        "`fleetsim convert` turns a Mooncake trace into one",
    );
  }
  if (options.replayConcurrency !== undefined) {
    issues.add(
      "replayConcurrency",
      `${retune} replays the trace on its timestamps: drop replayConcurrency (arrivalSpeedupRatio is allowed)`,
    );
  }
  if (options.maxSimTimeMs !== undefined) {
    issues.add("maxSimTimeMs", `${retune} replays the trace to its end: drop maxSimTimeMs`);
  }
}

function checkKeys(options: object, accepted: readonly string[], issues: OptionIssues): void {
  if (!isMapping(options)) {
    issues.add("options", `must be an object, got ${show(options)}`);
    return;
  }
  for (const key of Object.keys(options)) {
    if (!accepted.includes(key)) issues.unknownKey(key, key, accepted);
  }
}

/** Engine, router, SLA and Planner. Returns whether the HTML report is asked for. */
function translateCommon(
  options: CommonReplayOptions,
  draft: ConfigDraft,
  issues: OptionIssues,
  baseDir: string,
  /** Checks the traffic options against retune's requirements; receives the option path of `retune`. */
  checkRetune: (retuneOption: string) => void,
): Omit<Translation, "draft"> {
  if (options.replayMode !== undefined && options.replayMode !== "offline") {
    issues.add("replayMode", `${show(options.replayMode)} is not supported: fleetsim replays offline only`);
  }
  const disagg = options.prefillEngineArgs !== undefined || options.decodeEngineArgs !== undefined;
  let roles: RoleInput[];
  if (disagg) {
    if (options.extraEngineArgs !== undefined) {
      issues.add(
        "extraEngineArgs",
        "describes an aggregated deployment; with prefillEngineArgs/decodeEngineArgs leave it unset",
      );
    }
    for (const key of ["prefillEngineArgs", "decodeEngineArgs"] as const) {
      if (options[key] === undefined)
        issues.add(key, "Field required: a disaggregated deployment needs both roles");
    }
    if (options.numWorkers !== undefined) {
      issues.add("numWorkers", "counts aggregated workers; use numPrefillWorkers and numDecodeWorkers");
    }
    roles = [
      {
        role: "prefill",
        option: "prefillEngineArgs",
        args: options.prefillEngineArgs,
        replicas: { value: options.numPrefillWorkers ?? 1, option: "numPrefillWorkers" },
      },
      {
        role: "decode",
        option: "decodeEngineArgs",
        args: options.decodeEngineArgs,
        replicas: { value: options.numDecodeWorkers ?? 1, option: "numDecodeWorkers" },
      },
    ];
  } else {
    for (const key of ["numPrefillWorkers", "numDecodeWorkers"] as const) {
      if (options[key] !== undefined) {
        issues.add(key, "counts disaggregated workers; with extraEngineArgs use numWorkers");
      }
    }
    roles = [
      {
        role: "aggregated",
        option: "extraEngineArgs",
        args: options.extraEngineArgs,
        replicas: { value: options.numWorkers ?? 1, option: "numWorkers" },
      },
    ];
  }
  const modelName =
    options.modelName === undefined ? undefined : { value: options.modelName, option: "modelName" };
  const engine = translateEngine(roles, modelName, draft, issues);

  translateRouter(options, draft, issues);

  const sla: { ttftMs?: number; itlMs?: number; e2eMs?: number } = {};
  for (const [key, slaKey] of [
    ["slaTtftMs", "ttft_ms"],
    ["slaItlMs", "itl_ms"],
    ["slaE2eMs", "e2e_ms"],
  ] as const) {
    const value = options[key];
    if (value !== undefined) draft.set(["evaluation", "sla", slaKey], value, key);
  }
  if (typeof options.slaTtftMs === "number") sla.ttftMs = options.slaTtftMs;
  if (typeof options.slaItlMs === "number") sla.itlMs = options.slaItlMs;
  if (typeof options.slaE2eMs === "number") sla.e2eMs = options.slaE2eMs;

  for (const key of ["capturePlannerDetails", "capturePerRequest"] as const) {
    const value = options[key];
    if (value !== undefined && typeof value !== "boolean") {
      issues.add(key, `Input should be a valid boolean, got ${show(value)}`);
    }
  }

  const none = { writeReport: false, plannerTargets: null, identified: engine.identified };
  if (options.plannerConfig === undefined || options.plannerConfig === null) return none;
  const planner = readPlannerConfig(options.plannerConfig, baseDir, issues);
  if (planner === null) return none;
  const retune = planner.fields["retune"];
  if (retune !== undefined && retune !== null) checkRetune("plannerConfig.retune");
  const { writeReport, targets } = translatePlanner(planner, engine, sla, draft, issues);
  return { writeReport, plannerTargets: targets, identified: engine.identified };
}

export const ROUTER_CONFIG_KEYS = optionKeys<RouterConfig>()([
  "overlap_score_credit",
  "prefill_load_scale",
  "router_temperature",
  "temperature",
  "router_prefill_load_model",
]);

function translateRouter(options: CommonReplayOptions, draft: ConfigDraft, issues: OptionIssues): void {
  const mode = options.routerMode ?? "round_robin";
  draft.set(["router", "policy"], mode, "routerMode");
  const config = options.routerConfig;
  if (config === undefined) return;
  if (!isMapping(config)) {
    issues.add("routerConfig", `must be a mapping of KvRouterConfig fields, got ${show(config)}`);
    return;
  }
  for (const key of Object.keys(config)) {
    if (!(ROUTER_CONFIG_KEYS as readonly string[]).includes(key)) {
      issues.unknownKey(`routerConfig.${key}`, key, ROUTER_CONFIG_KEYS);
    }
  }
  if (config.router_temperature !== undefined && config.temperature !== undefined) {
    issues.add("routerConfig.temperature", "is the same as router_temperature; set only one");
  }
  for (const key of ["overlap_score_credit", "prefill_load_scale"] as const) {
    if (config[key] !== undefined) draft.set(["router", key], config[key], `routerConfig.${key}`);
  }
  const temperatureKey = config.router_temperature !== undefined ? "router_temperature" : "temperature";
  if (config[temperatureKey] !== undefined) {
    draft.set(["router", "temperature"], config[temperatureKey], `routerConfig.${temperatureKey}`);
  }
  if (config.router_prefill_load_model !== undefined) {
    draft.set(
      ["router", "prefill_load_model"],
      { type: config.router_prefill_load_model },
      "routerConfig.router_prefill_load_model",
    );
  }
}
