/**
 * The contract between the Planner core (pure decision logic, src/planner/) and the simulator
 * that drives it (src/sim/). Mirrors the Dynamo Planner's types (planner.md §2), in camelCase.
 * Times in seconds unless a name says `Ms`.
 */

export type PlannerTarget = "throughput" | "latency" | "load" | "sla";
export type LoadPredictorKind = "constant" | "arima" | "prophet" | "kalman";
/** `agg`: one aggregated pool (its counts live in the decode fields); `disagg`: prefill + decode. */
export type PlannerMode = "agg" | "disagg";

/** PlannerConfig after the prediction schema's mapping, normalization and validation (planner.md §1, §9.1). */
export interface PlannerSettings {
  readonly mode: PlannerMode;
  readonly optimizationTarget: PlannerTarget;
  readonly enableThroughputScaling: boolean;
  readonly enableLoadScaling: boolean;
  readonly throughputAdjustmentIntervalS: number;
  readonly loadAdjustmentIntervalS: number;
  /** gcd of the enabled intervals (planner.md §1.2). */
  readonly scaleIntervalS: number;
  readonly maxThroughputScalingReplicas: number;
  /** `max_gpu_budget` (-1 = no ceiling). */
  readonly maxGpuBudget: number;
  /** `min_gpu_budget` (-1 = no floor). */
  readonly minGpuBudget: number;
  readonly minEndpoint: number;
  readonly prefillMinEndpoint: number | null;
  readonly decodeMinEndpoint: number | null;
  readonly ttftMs: number;
  readonly itlMs: number;
  /** 0–100. */
  readonly loadScalingDownSensitivity: number;
  readonly loadMinObservations: number;
  readonly maxNumFpmSamples: number;
  /** Perfect square. */
  readonly fpmSampleBucketSize: number;
  readonly prefillScaleUpQueueTokens: number | null;
  readonly prefillScaleDownQueueTokens: number | null;
  /** Percent 0–100. */
  readonly decodeScaleUpKvRate: number | null;
  readonly decodeScaleDownKvRate: number | null;
  readonly speculativeNextn: number;
  readonly loadPredictor: LoadPredictorKind;
  readonly loadPredictorLog1p: boolean;
  readonly prophetWindowSize: number;
  readonly kalmanQLevel: number;
  readonly kalmanQTrend: number;
  readonly kalmanR: number;
  readonly kalmanMinPoints: number;
  /** Absolute path of a Mooncake trace to pre-warm the predictors, or null. */
  readonly loadPredictorWarmupTrace: string | null;
  readonly advisory: boolean;
}

/** What a worker of one role can do (planner.md §2 `EngineCapabilities`). */
export interface EngineCapabilities {
  /** GPUs per replica (tensor × pipeline × attention_data). */
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

/** One engine's latest forward pass (planner.md §2 FPM record, §8.2 snapshot keys). */
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

/** Offered load and completed-request shapes over a window (planner.md §2, §8.3 merge rules). */
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

/** Per-tick diagnostics (planner.md §2 `TickDiagnostics`); fields absent when not computed. */
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
}

export interface PlannerEffects {
  readonly scaleTo: ScalingDecision | null;
  readonly nextTickS: number;
  readonly diagnostics: TickDiagnostics;
}

/**
 * A forward-pass time model the SLA logic queries (planner.md §3.3): learned online from FPMs
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
