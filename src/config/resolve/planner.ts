/**
 * Validated `planner` section → PlannerSettings: the mapping of the AISimulate adapter
 * (`_planner_config_payload`, `ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`) onto PlannerConfig, after its easy-mode
 * normalization and gcd rule (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`). `policy: disabled` builds no Planner (`null`). The
 * knob table (knobs/planner.ts) maps each key to its field; this module adds what relates keys
 * and sections.
 *
 * `planner.retune` resolves into `PlannerSettings.retune` (config/resolve/retune.ts). In retune-only
 * mode both scaling flags are off and the Planner ticks every load interval.
 */
import { FIXED_PLANNER_SETTINGS, knobSettingsOf } from "../../knobs/planner.js";
import type { PlannerSettings } from "../../planner/types.js";
import { TraceError } from "../../traffic/traceError.js";
import { warmupTraceFiles, warmupTracePath } from "../../traffic/warmupTraceFiles.js";
import type { PredictConfigOutput } from "../schema/index.js";
import { normalizedScaling, plannerTickSeconds } from "../schema/planner.js";
import type { Report } from "./engine.js";
import { resolveRetune } from "./retune.js";

/** PlannerConfig `ttft_ms` / `itl_ms` defaults (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`), used by targets other than `sla`. */
export const DEFAULT_PLANNER_TTFT_MS = 500;
export const DEFAULT_PLANNER_ITL_MS = 50;

/** The fixed thresholds the adapter sets for `target: load` (`ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`). */
const LOAD_TARGET_THRESHOLDS = {
  prefillScaleUpQueueTokens: 1,
  prefillScaleDownQueueTokens: 0,
  decodeScaleUpKvRate: 90,
  decodeScaleDownKvRate: 70,
} as const;

/**
 * `null` for `policy: disabled`; `undefined` when an issue was reported. `workDir` is the working
 * directory that a relative `load_predictor_warmup_trace` resolves against (seed 000), unlike trace
 * paths, which resolve against the config file's directory.
 */
export function resolvePlanner(
  config: PredictConfigOutput,
  workDir: string,
  report: Report,
): PlannerSettings | null | undefined {
  const p = config.planner;
  if (p.policy === "disabled") return null;

  let warmupTrace: string | null = null;
  if (p.load_predictor_warmup_trace !== null) {
    // A file, a directory of shards or a pattern; checked now so the error names the config key.
    warmupTrace = warmupTracePath(p.load_predictor_warmup_trace, workDir);
    try {
      warmupTraceFiles(warmupTrace);
    } catch (err) {
      if (!(err instanceof TraceError)) throw err;
      report(
        ["planner", "load_predictor_warmup_trace"],
        `${err.message} (relative paths resolve against the working directory)`,
      );
      return undefined;
    }
  }

  const mode = config.engine.mode === "disaggregated" ? "disagg" : "agg";
  const scaling = normalizedScaling(p);
  // Schema guarantees both SLA targets for target 'sla'.
  const sla = config.evaluation.sla;
  const isSla = p.target === "sla";
  const isLoad = p.target === "load";

  const settings: PlannerSettings = {
    // Every knob of the table as validated (null intervals, valid only for modes that are off,
    // carry the defaults); the fields below are the rules between keys and sections.
    ...knobSettingsOf(p),
    ...FIXED_PLANNER_SETTINGS,
    mode,
    enableThroughputScaling: scaling.throughput,
    enableLoadScaling: scaling.load,
    // The gcd of the enabled intervals; the load interval in retune-only mode.
    scaleIntervalS: plannerTickSeconds(p),
    ttftMs: isSla ? sla!.ttft_ms! : DEFAULT_PLANNER_TTFT_MS,
    itlMs: isSla ? sla!.itl_ms! : DEFAULT_PLANNER_ITL_MS,
    // Prefill queue thresholds only where there is a prefill pool (disagg).
    prefillScaleUpQueueTokens:
      isLoad && mode === "disagg" ? LOAD_TARGET_THRESHOLDS.prefillScaleUpQueueTokens : null,
    prefillScaleDownQueueTokens:
      isLoad && mode === "disagg" ? LOAD_TARGET_THRESHOLDS.prefillScaleDownQueueTokens : null,
    decodeScaleUpKvRate: isLoad ? LOAD_TARGET_THRESHOLDS.decodeScaleUpKvRate : null,
    decodeScaleDownKvRate: isLoad ? LOAD_TARGET_THRESHOLDS.decodeScaleDownKvRate : null,
    loadPredictorWarmupTrace: warmupTrace,
  };
  const retune = resolveRetune(config, settings, scaling);
  return retune === null ? settings : { ...settings, retune };
}
