/**
 * Conformance: GPU-hours accounting of a replay (`ai-dynamo/dynamo@84809e0:components/src/dynamo/planner/offline/replay_adapter.py` accumulator
 * `Σ (active_p·gpu_p + active_d·gpu_d)·Δt_h`; `ai-dynamo/dynamo@b34225a:components/src/dynamo/planner/tests/offline/test_replay_adapter_scaling.py`:
 * 1 prefill worker × 2 GPUs + 2 decode workers × 4 GPUs over 1 h = 10.0 GPU-hours).
 *
 * A disaggregated replay through `runPrediction` whose virtual time spans exactly one hour. Trace
 * timestamps are rebased so the first request arrives at 0, so the trace has one request at 0 and one at
 * 3 599 990 ms; fixed timing (4 ms prefill pass, 2 ms per decode pass, no KV-transfer bandwidth ⇒
 * instant hand-off) puts each request's three output tokens at +6, +8, +10 ms, so the last completion —
 * and the end of the replay — is at 3 600 000 ms. Workers accrue from 0 to the end of the replay.
 */
import { describe, expect, it } from "vitest";
import type { RunSpec } from "../../src/config/runSpec.js";
import { runPrediction } from "../../src/pipeline/index.js";
import type { PlannerSettings } from "../../src/planner/types.js";
import { plannerSettings } from "../helpers/planner.js";
import { disaggSpec, writeTrace } from "../helpers/specs.js";

const ARRIVAL_MS = 3_599_990;
const HOUR_MS = 3_600_000;

function oneHourSpec(): RunSpec {
  const trace = writeTrace([
    { timestamp: 0, input_length: 8, output_length: 3, hash_ids: [1, 2] },
    { timestamp: ARRIVAL_MS, input_length: 8, output_length: 3, hash_ids: [3, 4] },
  ]);
  return disaggSpec(trace, {
    prefill: {
      replicas: 1,
      tensor: 2,
      gpusPerWorker: 2,
      timing: { type: "fixed", prefillMs: 4, decodeMs: 2 },
    },
    decode: {
      replicas: 2,
      tensor: 4,
      gpusPerWorker: 4,
      timing: { type: "fixed", prefillMs: 4, decodeMs: 2 },
    },
    transfer: { bandwidthGBps: null },
  });
}

/** Easy `throughput` target, load loop every 5 s, no budget: idle decode (KV 0 < 0.6) at N = 2 ⇒ 1. */
function planner(advisory: boolean): PlannerSettings {
  return plannerSettings({ advisory });
}

describe("GPU-hours: 1×2 + 2×4 GPUs over 1 h = 10.0", () => {
  it("a one-hour disaggregated replay without a Planner reports gpu_hours 10.0", async () => {
    const spec = oneHourSpec();
    expect(spec.planner).toBeNull();
    const { prediction, result } = await runPrediction(spec, { capturePerRequest: false });
    expect(result.endTimeMs).toBe(HOUR_MS);
    const s = prediction.summary;
    expect(s).toMatchObject({
      completed_requests: 2,
      prefill_worker_seconds: 3600,
      decode_worker_seconds: 7200,
      prefill_gpus_per_worker: 2,
      decode_gpus_per_worker: 4,
      gpu_hours: 10,
    });
    expect(prediction.planner).toBeNull();
  });

  it("the timeline lands the last token exactly on the hour", async () => {
    const { result } = await runPrediction(oneHourSpec(), { capturePerRequest: true });
    const c = result.requests.columns();
    expect([c.arrival[0], c.firstToken[0], c.lastToken[0]]).toEqual([0, 6, 10]);
    expect([c.arrival[1], c.firstToken[1], c.lastToken[1]]).toEqual([ARRIVAL_MS, ARRIVAL_MS + 6, HOUR_MS]);
  });

  it("an advisory Planner ticking every 5 s changes nothing: still 10.0, its recommendation listed once", async () => {
    const spec = { ...oneHourSpec(), planner: planner(true) };
    const { prediction, result } = await runPrediction(spec, { capturePerRequest: false });
    expect(result.endTimeMs).toBe(HOUR_MS);
    expect(prediction.summary.gpu_hours).toBe(10);
    const p = prediction.planner!;
    expect(p.scaling_events).toEqual([]);
    expect(p.lifecycle_operations).toEqual([]);
    // Ticks every 5 s until the traffic is served (the last one at 3 600 000 ms).
    expect(p.total_ticks).toBe(HOUR_MS / 5000);
    expect(p.recommended_scaling_events).toEqual([
      { at_s: 5, component: "decode", from_count: 2, to_count: 1, reason: "scale_down" },
    ]);
  });

  it("an active Planner that drains an idle decode worker at 5 s: (2·3600 + 4·(2·5 + 1·3595)) / 3600 GPU-hours", async () => {
    const spec = { ...oneHourSpec(), planner: planner(false) };
    const { prediction, result } = await runPrediction(spec, { capturePerRequest: false });
    expect(result.endTimeMs).toBe(HOUR_MS);
    const p = prediction.planner!;
    expect(p.scaling_events).toEqual([
      { at_s: 5, component: "decode", from_count: 2, to_count: 1, reason: "scale_down" },
    ]);
    const s = prediction.summary;
    expect(s.prefill_worker_seconds).toBe(3600);
    // The idle worker drains and is removed at once at 5 s.
    expect(s.decode_worker_seconds).toBe(3605);
    expect(s.gpu_hours).toBeCloseTo((2 * 3600 + 4 * 3605) / 3600, 12);
  });
});
