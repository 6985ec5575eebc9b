import { describe, expect, it } from "vitest";
import { buildSummary } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";
import type { ScalingPolicy } from "../../src/sim/scaling.js";
import { ScriptedPolicy } from "../helpers/scriptedPolicy.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

async function run(spec: ReturnType<typeof traceSpec>, policy: ScalingPolicy) {
  const table = await loadWorkload(spec);
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
    scaling: policy,
  });
  return replay.runSync();
}

describe("worker lifecycle under scaling (`ai-dynamo/aisimulate@bbdd237:crates/core/src/replay/agg.rs` worked test)", () => {
  it("starts a worker after its startup delay, then scales the idle ready worker back down", async () => {
    const rows = [{ timestamp: 0, input_length: 4, output_length: 2, hash_ids: [1] }];
    const spec = traceSpec(writeTrace(rows), {
      role: { startupSeconds: 0.2, timing: { type: "fixed", prefillMs: 1000, decodeMs: 1000 } },
    });
    const policy = new ScriptedPolicy(100, { 100: 2, 300: 1 });
    const result = await run(spec, policy);
    const byTime = new Map(policy.seen.map((s) => [s.nowMs, s.decodeTopology]));
    expect(byTime.get(200)).toEqual({ active: [0], starting: [1], draining: [] });
    expect(byTime.get(300)).toEqual({ active: [0, 1], starting: [], draining: [] });
    expect(byTime.get(400)).toEqual({ active: [0], starting: [], draining: [] });
    const s = buildSummary(result, null);
    // First token at 2000 (1000 prefill + 1000 decode in one pass), second at 3000.
    expect(s.duration_ms).toBe(3000);
    // 3.0 s for worker 0 plus 0.2 s for worker 1 (started at 100, removed at 300).
    expect(s.decode_worker_seconds).toBeCloseTo(3.2, 12);
    expect(
      result.lifecycleOperations.map((o) => [o.at_ms, o.cause, o.transitions.map((x) => x.transition)]),
    ).toEqual([
      [100, "scale_up", ["worker_starting"]],
      [300, "startup_complete", ["worker_ready"]],
      [300, "scale_down", ["worker_draining", "worker_removed"]],
    ]);
  });

  it("drains a busy worker: it takes no new requests and is removed when its work is done", async () => {
    const rows = [
      { timestamp: 0, input_length: 4, output_length: 5, hash_ids: [1] },
      { timestamp: 0, input_length: 4, output_length: 5, hash_ids: [2] },
      { timestamp: 150, input_length: 4, output_length: 1, hash_ids: [3] },
    ];
    const spec = traceSpec(writeTrace(rows), {
      role: { replicas: 2, timing: { type: "fixed", prefillMs: 10, decodeMs: 10 } },
    });
    const policy = new ScriptedPolicy(50, { 50: 1 });
    const result = await run(spec, policy);
    // Request 1 ran on worker 1, which drains at 50 and is removed when request 1 ends (at 60 ms).
    expect(result.requests.columns().worker[1]).toBe(1);
    expect(result.requests.columns().worker[2]).toBe(0);
    const ops = result.lifecycleOperations;
    expect(ops[0]).toMatchObject({
      at_ms: 50,
      cause: "scale_down",
      transitions: [{ worker_id: 1, transition: "worker_draining" }],
    });
    expect(ops[1]).toMatchObject({
      cause: "drain_complete",
      transitions: [{ worker_id: 1, transition: "worker_removed" }],
    });
    expect(ops[1].at_ms).toBe(result.requests.columns().terminal[1]);
    const s = buildSummary(result, null);
    expect(s.completed_requests).toBe(3);
    // Worker 1 is provisioned until it is removed; worker 0 until the end.
    expect(s.decode_worker_seconds).toBeCloseTo((s.duration_ms + ops[1].at_ms) / 1000, 12);
  });

  it("holds arrivals in the router queue while no worker is ready (scale to zero and back)", async () => {
    const rows = [
      { timestamp: 0, input_length: 4, output_length: 1, hash_ids: [1] },
      { timestamp: 250, input_length: 4, output_length: 1, hash_ids: [2] },
    ];
    const spec = traceSpec(writeTrace(rows), { role: { startupSeconds: 0.1 } });
    const policy = new ScriptedPolicy(100, { 100: 0, 300: 1 });
    const result = await run(spec, policy);
    // Request 1 arrives at 250 with no worker; a worker starts at 300 and is ready at 400.
    expect(result.requests.columns().arrival[1]).toBe(250);
    expect(result.requests.columns().dispatched[1]).toBe(400);
    expect(result.requests.columns().firstToken[1]).toBe(412);
  });

  it("reports the traffic window and forward-pass metrics to the policy", async () => {
    // A: 8 tokens in, 5 out, tokens at 12, 24, 26, 28, 30. B: 4 in, 1 out, done at 24.
    const rows = [
      { timestamp: 0, input_length: 8, output_length: 5, hash_ids: [1, 2] },
      { timestamp: 5, input_length: 4, output_length: 1, hash_ids: [3] },
    ];
    const spec = traceSpec(writeTrace(rows));
    const policy = new ScriptedPolicy(10, {});
    await run(spec, policy);
    expect(policy.seen.map((s) => s.nowMs)).toEqual([10, 20, 30]);
    const [t10, t20, t30] = policy.seen;
    expect(t10.traffic.numReq).toBe(2);
    expect(t10.traffic.shapeCount).toBe(0);
    expect(t10.traffic.durationS).toBeCloseTo(0.01, 12);
    // A pass is published at its end (engine `publishedStats`). At 10 the first pass (0–12 ms) is
    // still running and nothing has been published: the worker is left out.
    expect(t10.decodeFpm).toEqual([]);
    // At 20 the second pass (12–24) runs; the first is the latest published: A's 8-token prefill,
    // which also emits its first token but counts as a prefill only (a vLLM worker's FPM).
    expect(t20.decodeFpm[0]).toMatchObject({
      workerId: 0,
      dpRank: 0,
      numPrefillRequests: 1,
      sumPrefillTokens: 8,
      numDecodeRequests: 0,
      sumDecodeKvTokens: 0,
      numQueuedPrefill: 0,
    });
    expect(t20.decodeFpm[0].wallTimeS).toBeCloseTo(0.012, 12);
    // At 30 the pass 28–30 has just ended: A's last decode, alone.
    expect(t30.decodeFpm[0]).toMatchObject({ numPrefillRequests: 0, numDecodeRequests: 1 });
    expect(t20.traffic.numReq).toBe(0);
    // At 30 both have completed: shapes are over completed requests.
    expect(t30.traffic.shapeCount).toBe(2);
    expect(t30.traffic.sumIsl).toBe(12);
    expect(t30.traffic.sumOsl).toBe(6);
  });
});
