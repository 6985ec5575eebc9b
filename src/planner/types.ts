/**
 * The contract between the Planner core (pure decision logic, src/planner/) and the simulator
 * that drives it (src/sim/). Mirrors the Dynamo Planner's types (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py`), in camelCase.
 * Times in seconds unless a name says `Ms`.
 */
import type {
  DerivedPlannerSettings,
  FixedPlannerSettings,
  KnobSettings,
  LoadPredictorFields,
  RetunePlannerField,
} from "../knobs/planner.js";
import type { RETUNE_OBJECTIVES } from "../output/run.js";

export type {
  LoadPredictorFields,
  LoadPredictorKind,
  PlannerMode,
  PlannerTarget,
  RetunePlannerField,
} from "../knobs/planner.js";

/**
 * PlannerConfig after the prediction schema's mapping, normalization and validation
 * (`ai-dynamo/dynamo@34ede16:components/src/dynamo/planner/config/planner_config.py`, `ai-dynamo/dynamo@2a06936:components/src/dynamo/planner/simulation/config.py`): one field per row of the knob table (knobs/planner.ts, `KnobSettings`: a row is a
 * field, with the type of its value rule), the fields derived from other sections and the
 * PlannerConfig defaults no key sets.
 */
export interface PlannerSettings extends KnobSettings, DerivedPlannerSettings, FixedPlannerSettings {
  /**
   * Bootstrap the `sla` perf models from the run's timing model (`ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`). `false` when the
   * library API's engine arguments name no model and GPU (no AIS/AIC identity): the bootstrap is
   * `not_configured_load_only` and the perf models learn from live forward passes only, as in the
   * reference's Python API. Absent (every YAML config) = true.
   */
  readonly bootstrapPerfModel?: boolean;
  /**
   * `planner.retune` resolved (docs/retune.md); absent or null = no retune. The retune controller
   * (src/autoscale/retuneController.ts) runs it for aggregated and disaggregated deployments.
   */
  readonly retune?: RetuneSettings | null;
}

/** `planner.retune.objective` (seed 003 "Scoring and Outcomes"). */
export type RetuneObjective = (typeof RETUNE_OBJECTIVES)[number];

/** The Planner fields of one value of a Planner dimension (a preset sets two). */
export type RetunePlannerPoint = Readonly<Partial<Pick<PlannerSettings, RetunePlannerField>>>;

/** One dimension of the Planner part of the grid, in canonical order of its values. */
export interface RetunePlannerDimension {
  /** The `retune.planner` key: a field (`load_scaling_down_sensitivity`) or a preset group (`load_sensitivity`). */
  readonly key: string;
  readonly points: readonly RetunePlannerPoint[];
}

/** One candidate of the load-predictor pre-sweep (`ai-dynamo/dynamo@9f3266c:components/src/dynamo/planner/simulation/load_predictor.py` preset). */
export interface LoadPredictorCandidate {
  readonly name: string;
  readonly fields: LoadPredictorFields;
}

/** Expanded KV-router domains, as explicit value lists (config names; live `router_temperature` for temperature). */
export interface RetuneRouterDomain {
  readonly overlapScoreCredit: readonly number[];
  readonly prefillLoadScale: readonly number[];
  readonly temperature: readonly number[];
}

/** `planner.retune` after defaults, domain expansion and the scaling mode (docs/retune.md). */
export interface RetuneSettings {
  /** T: window length and sweep period; a multiple of the Planner tick. */
  readonly intervalS: number;
  /** G: a window's sweep launches (and its requests are censored) at window end + G. */
  readonly graceS: number;
  readonly maxParallel: number;
  /** Wall-clock bound of one sweep; at most `intervalS` (× `decisionLatencyScale` when measured). */
  readonly timeoutS: number;
  /** D: trace seconds between launch and the earliest decision, or `measured` (sweep wall time × scale). */
  readonly decisionLatencyS: number | "measured";
  /** Multiplies a measured sweep time; 1 unless `decisionLatencyS` is `measured`. */
  readonly decisionLatencyScale: number;
  readonly minImprovementPercentage: number;
  readonly maxCandidates: number;
  readonly objective: RetuneObjective;
  /** `min` for TTFT and E2ELatency, `max` otherwise. */
  readonly objectiveSense: "max" | "min";
  /** Scoring SLA of the Goodput objectives: `retune.sla_*`, else `evaluation.sla`, else the Planner's targets. */
  readonly slaTtftMs: number;
  readonly slaItlMs: number;
  /** Both scaling flags explicitly false: the Planner never scales and ticks every load interval. */
  readonly retuneOnly: boolean;
  /** Trace history before each window read for an inner Planner that scales on throughput; null otherwise. */
  readonly historyS: number | null;
  /** null: router parameters are not searched. */
  readonly router: RetuneRouterDomain | null;
  /** Planner dimensions of the grid in canonical order; empty when no Planner field is searched. */
  readonly plannerDimensions: readonly RetunePlannerDimension[];
  /** Candidates of the load-predictor pre-sweep in canonical order; null when the predictor is not searched. */
  readonly loadPredictorCandidates: readonly LoadPredictorCandidate[] | null;
  /** Points of the Cartesian grid (the product of all dimension sizes), before the startup and current points. */
  readonly gridSize: number;
}

/** What a worker of one role can do (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py` `EngineCapabilities`). */
export interface EngineCapabilities {
  /** GPUs per replica (tensor × attention_data). */
  readonly numGpu: number;
  /** Budget cost per replica; `gpu_cost_per_replica ?? num_gpu`. */
  readonly gpuCostPerReplica: number;
  readonly maxNumBatchedTokens: number;
  readonly maxNumSeqs: number;
  readonly contextLength: number;
  /** num_gpu_blocks × block_size × attention_data. */
  readonly maxKvTokens: number;
  readonly kvCacheBlockSize: number;
  readonly speculativeNextn: number;
  /** Attention-DP ranks per worker. */
  readonly attentionData: number;
}

/** One engine's latest forward pass (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py` FPM record; snapshot keys: `ai-dynamo/dynamo@fdf4b3d:lib/mocker/src/replay/offline/planner_hook.rs`). */
export interface ForwardPassMetrics {
  readonly workerId: number;
  readonly dpRank: number;
  /** Seconds; 0 = idle heartbeat. */
  readonly wallTimeS: number;
  readonly numPrefillRequests: number;
  readonly sumPrefillTokens: number;
  readonly varPrefillLength: number;
  readonly sumPrefillKvTokens: number;
  readonly numDecodeRequests: number;
  readonly sumDecodeKvTokens: number;
  readonly varDecodeKvTokens: number;
  readonly numQueuedPrefill: number;
  readonly sumQueuedPrefillTokens: number;
  readonly varQueuedPrefillLength: number;
  readonly numQueuedDecode: number;
  readonly sumQueuedDecodeKvTokens: number;
  readonly varQueuedDecodeKvTokens: number;
}

/** An FPM of engine `workerId` with every counter 0 (an idle heartbeat), then `fields` over it. */
export function forwardPassMetrics(
  workerId: number,
  fields: Partial<ForwardPassMetrics> = {},
): ForwardPassMetrics {
  return {
    workerId,
    dpRank: 0,
    wallTimeS: 0,
    numPrefillRequests: 0,
    sumPrefillTokens: 0,
    varPrefillLength: 0,
    sumPrefillKvTokens: 0,
    numDecodeRequests: 0,
    sumDecodeKvTokens: 0,
    varDecodeKvTokens: 0,
    numQueuedPrefill: 0,
    sumQueuedPrefillTokens: 0,
    varQueuedPrefillLength: 0,
    numQueuedDecode: 0,
    sumQueuedDecodeKvTokens: 0,
    varQueuedDecodeKvTokens: 0,
    ...fields,
  };
}

/** Every counter of an FPM: all but its identity and its wall time. */
const FPM_COUNTERS = [
  "numPrefillRequests",
  "sumPrefillTokens",
  "varPrefillLength",
  "sumPrefillKvTokens",
  "numDecodeRequests",
  "sumDecodeKvTokens",
  "varDecodeKvTokens",
  "numQueuedPrefill",
  "sumQueuedPrefillTokens",
  "varQueuedPrefillLength",
  "numQueuedDecode",
  "sumQueuedDecodeKvTokens",
  "varQueuedDecodeKvTokens",
] as const satisfies readonly (keyof ForwardPassMetrics)[];

/** A field added to `ForwardPassMetrics` without its place above (or among the identity fields) does not compile. */
const COUNTERS_COMPLETE: Exclude<
  keyof ForwardPassMetrics,
  (typeof FPM_COUNTERS)[number] | "workerId" | "dpRank" | "wallTimeS"
> extends never
  ? true
  : never = true;
void COUNTERS_COMPLETE;

/** Nothing scheduled and nothing queued: every counter 0 (Dynamo's `ForwardPassMetrics.is_idle`). */
export function isIdleFpm(f: ForwardPassMetrics): boolean {
  for (const k of FPM_COUNTERS) if (f[k] !== 0) return false;
  return true;
}

/** Offered load and completed-request shapes over a window (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py`, `ai-dynamo/dynamo@84809e0:components/src/dynamo/planner/offline/replay_adapter.py` merge rules). */
export interface TrafficObservation {
  readonly durationS: number;
  readonly numReq: number;
  readonly isl: number;
  readonly osl: number;
  readonly kvHitRate: number | null;
  readonly acceptLength: number | null;
}

export interface WorkerCounts {
  readonly readyPrefill: number | null;
  readonly readyDecode: number | null;
  readonly expectedPrefill: number | null;
  readonly expectedDecode: number | null;
  readonly prefillScalingInProgress: boolean;
  readonly decodeScalingInProgress: boolean;
}

export interface TickInput {
  readonly nowS: number;
  /** Present on ticks that consume traffic (throughput ticks); merged windows since the last one. */
  readonly traffic: TrafficObservation | null;
  readonly workers: WorkerCounts;
  /** Latest FPM per (worker, rank) of ready workers; agg puts everything in `decode`. */
  readonly fpmPrefill: readonly ForwardPassMetrics[] | null;
  readonly fpmDecode: readonly ForwardPassMetrics[] | null;
}

/** Absolute replica targets; null = unchanged. */
export interface ScalingDecision {
  readonly numPrefill: number | null;
  readonly numDecode: number | null;
}

/** Per-tick diagnostics (`ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py` `TickDiagnostics`); fields absent when not computed. */
export interface TickDiagnostics {
  estimatedTtftMs?: number | null;
  estimatedItlMs?: number | null;
  predictedNumReq?: number | null;
  predictedIsl?: number | null;
  predictedOsl?: number | null;
  predictedKvHitRate?: number | null;
  engineRpsPrefill?: number | null;
  engineRpsDecode?: number | null;
  throughputLowerBoundPrefill?: number | null;
  throughputLowerBoundDecode?: number | null;
  loadDecisionReason?: string | null;
  loadDecisionReasonPrefill?: string | null;
  loadDecisionReasonDecode?: string | null;
  throughputDecisionReason?: string | null;
  throughputDecisionReasonPrefill?: string | null;
  throughputDecisionReasonDecode?: string | null;
  /** Per role whose load decision ran, whether its engine metadata was there (loadScaling/types.ts `LoadOutcome`). */
  loadMetadataAvailable?: Partial<Record<"prefill" | "decode", boolean>>;
  /** Per role the throughput loop sized this tick, whether its engine metadata was there. */
  throughputMetadataAvailable?: Partial<Record<"prefill" | "decode", boolean>>;
}

export interface PlannerEffects {
  readonly scaleTo: ScalingDecision | null;
  readonly nextTickS: number;
  readonly diagnostics: TickDiagnostics;
}

/**
 * A forward-pass time model the SLA logic queries (`ai-dynamo/dynamo@0c11ddf:components/src/dynamo/planner/core/perf_model/engine_query.py`): learned online from FPMs
 * (legacy OLS regressions with bucketed sample retirement), optionally bootstrapped.
 */
export interface EnginePerfModel {
  addObservation(fpm: ForwardPassMetrics): void;
  hasSufficientData(): boolean;
  /** Seconds for one forward pass; null when the model cannot answer. */
  forwardPassS(
    prefillTokens: number,
    prefillRequests: number,
    decodeRequests: number,
    decodeKvTokens: number,
  ): number | null;
}
