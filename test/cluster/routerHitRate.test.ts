import { describe, expect, it } from "vitest";
import type { RouterSpec, RunSpec } from "../../src/config/runSpec.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay } from "../../src/sim/replay.js";
import { ScriptedPolicy } from "../helpers/scriptedPolicy.js";
import { disaggSpec, traceSpec, writeTrace } from "../helpers/specs.js";

const KV_ROUTER: RouterSpec = {
  policy: "kv_router",
  overlapScoreCredit: 1,
  prefillLoadScale: 1,
  temperature: 0,
  prefillLoadModel: "none",
};

/**
 * Three prompts on one worker (blocks of 4 tokens): the second shares the first's two blocks and
 * has a partial third (10 tokens: 3 blocks, 2 cached when it is routed), the third repeats the
 * first (8 tokens: 2 blocks, both cached).
 */
const ROWS = [
  { timestamp: 0, input_length: 8, output_length: 1, hash_ids: [1, 2] },
  { timestamp: 100, input_length: 10, output_length: 1, hash_ids: [1, 2, 3] },
  { timestamp: 190, input_length: 8, output_length: 1, hash_ids: [1, 2] },
];

/** Every tick's window summed; ticks every 50 ms see each admission (a disaggregated run routes after a tick). */
async function windows(spec: RunSpec) {
  const policy = new ScriptedPolicy(50, {});
  const replay = new Replay(spec, await loadWorkload(spec), await createRoleTimings(spec.engine), {
    capturePerRequest: false,
    scaling: policy,
  });
  replay.runSync();
  const count = policy.seen.reduce((n, s) => n + s.traffic.hitRateCount, 0);
  const sum = policy.seen.reduce((n, s) => n + s.traffic.sumKvHitRate, 0);
  return { count, sum };
}

const fixed = { timing: { type: "fixed", prefillMs: 10, decodeMs: 10 } } as const;

describe("the Planner's KV hit rate is the front router's view at admission (`ai-dynamo/dynamo@fe06e46:lib/mocker/src/replay/offline/components/types.rs` `on_admission`)", () => {
  it("under the KV router: the chosen worker's cached leading blocks over the prompt's blocks, a partial block counted", async () => {
    const spec = { ...traceSpec(writeTrace(ROWS), { role: fixed }), router: KV_ROUTER };
    const { count, sum } = await windows(spec);
    expect(count).toBe(3);
    // 0/2, then 2 of 3 blocks (the partial third counts), then 2/2.
    expect(sum).toBeCloseTo(0 + 2 / 3 + 1, 12);
  });

  it("under round robin: no samples, although the engine reuses the cached prefix", async () => {
    const spec = traceSpec(writeTrace(ROWS), { role: fixed });
    expect(await windows(spec)).toEqual({ count: 0, sum: 0 });
  });

  it("in a disaggregated deployment: the prefill router's admissions only", async () => {
    const spec = disaggSpec(writeTrace(ROWS), {
      router: KV_ROUTER,
      prefill: fixed,
      decode: fixed,
    });
    const { count, sum } = await windows(spec);
    expect(count).toBe(3);
    expect(sum).toBeCloseTo(0 + 2 / 3 + 1, 12);
  });
});
