import { type KnobRow, type KnobSettings, PLANNER_KNOBS } from "../../src/knobs/planner.js";
import type { EngineCapabilities, ForwardPassMetrics, PlannerSettings } from "../../src/planner/types.js";

/**
 * Every knob's settings field at its table default: the base of the fixtures below, so a new row
 * of the knob table needs no edit here (the fixtures still pin the values their tests are about).
 */
export function knobDefaults(): KnobSettings {
  const out: Record<string, unknown> = {};
  for (const row of PLANNER_KNOBS as readonly KnobRow[])
    if (row.settings !== null) out[row.settings] = row.default;
  return out as KnobSettings;
}

/**
 * Planner test fixtures: fully specified objects with neutral defaults — every knob at its table
 * default, then a disaggregated, load-only deployment (constant predictor, no GPU budget) with
 * PlannerConfig's SLA targets and no load thresholds. Each test file overrides what its cases are
 * about.
 */
export function plannerSettings(over: Partial<PlannerSettings> = {}): PlannerSettings {
  return {
    ...knobDefaults(),
    mode: "disagg",
    enableThroughputScaling: false,
    enableLoadScaling: true,
    scaleIntervalS: 5,
    maxGpuBudget: -1,
    ttftMs: 500,
    itlMs: 50,
    prefillScaleUpQueueTokens: null,
    prefillScaleDownQueueTokens: null,
    decodeScaleUpKvRate: null,
    decodeScaleDownKvRate: null,
    loadPredictor: "constant",
    ...over,
  };
}

export function engineCaps(over: Partial<EngineCapabilities> = {}): EngineCapabilities {
  return {
    numGpu: 1,
    gpuCostPerReplica: 1,
    maxNumBatchedTokens: 2048,
    maxNumSeqs: 256,
    contextLength: 4096,
    maxKvTokens: 100_000,
    kvCacheBlockSize: 16,
    speculativeNextn: 0,
    attentionData: 1,
    ...over,
  };
}

/** An FPM with every counter 0 (an idle heartbeat unless `wallTimeS` is set). */
export function forwardPass(workerId: number, over: Partial<ForwardPassMetrics> = {}): ForwardPassMetrics {
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
    ...over,
  };
}
