/**
 * Scale-down order (issue 15's surviving mutant "draining ready workers before cancelling
 * starting ones"): bringing a pool down to a target cancels its starting workers first (highest id
 * first), and only then drains ready workers, highest id first (docs/planner.md, docs/architecture.md
 * "Worker lifecycle"; `scaleDown` in src/cluster/lifecycle.ts). A starting worker serves nothing yet, so
 * cancelling it costs no in-flight work and frees its GPUs at once.
 */
import { describe, expect, it } from "vitest";
import { buildSummary } from "../../src/metrics/summary.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";
import { ScriptedPolicy } from "../helpers/scriptedPolicy.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

/**
 * Two ready workers (0, 1); worker 0 serves a request until 3000 ms. At 100 ms the policy asks
 * for `up` workers, which start (ready only after 10 s); at 200 ms for `down`.
 */
async function scenario(up: number, down: number) {
  const rows = [{ timestamp: 0, input_length: 4, output_length: 2, hash_ids: [1] }];
  const spec = traceSpec(writeTrace(rows), {
    role: { replicas: 2, startupSeconds: 10, timing: { type: "fixed", prefillMs: 1000, decodeMs: 1000 } },
  });
  const policy = new ScriptedPolicy(100, { 100: up, 200: down });
  const table = await loadWorkload(spec);
  const replay = new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
    scaling: policy,
  });
  const result = replay.runSync();
  const ops = result.lifecycleOperations.map((o) => ({
    at_ms: o.at_ms,
    cause: o.cause,
    transitions: o.transitions.map((t) => [t.worker_id, t.transition]),
  }));
  return { policy, ops, result };
}

describe("scale-down cancels starting workers before draining ready ones", () => {
  it("3 → 2 with one worker starting: the starting worker is cancelled, both ready workers stay", async () => {
    const { policy, ops, result } = await scenario(3, 2);
    expect(policy.topology.get(200)).toEqual({ active: [0, 1], starting: [2], draining: [] });
    expect(ops).toEqual([
      { at_ms: 100, cause: "scale_up", transitions: [[2, "worker_starting"]] },
      { at_ms: 200, cause: "scale_down", transitions: [[2, "worker_removed"]] },
    ]);
    expect(policy.topology.get(300)).toEqual({ active: [0, 1], starting: [], draining: [] });
    // Worker-seconds: 2 × 3 s for the ready workers, 0.1 s for the cancelled one.
    expect(buildSummary(result, null).decode_worker_seconds).toBeCloseTo(6.1, 12);
  });

  it("4 → 1 with two starting: both are cancelled (highest id first), then the highest-id ready worker drains", async () => {
    const { policy, ops } = await scenario(4, 1);
    expect(policy.topology.get(200)).toEqual({ active: [0, 1], starting: [2, 3], draining: [] });
    expect(ops).toEqual([
      {
        at_ms: 100,
        cause: "scale_up",
        transitions: [
          [2, "worker_starting"],
          [3, "worker_starting"],
        ],
      },
      {
        at_ms: 200,
        cause: "scale_down",
        transitions: [
          [3, "worker_removed"],
          [2, "worker_removed"],
          // Worker 1 is idle (the request runs on worker 0): drained and removed at once.
          [1, "worker_draining"],
          [1, "worker_removed"],
        ],
      },
    ]);
    expect(policy.topology.get(300)).toEqual({ active: [0], starting: [], draining: [] });
  });
});
