/**
 * The decode pool's KV router counts decode load only (issue 15's surviving mutant "the decode
 * router tracking prefill tokens"): Dynamo's replay builds it with `router_track_prefill_tokens =
 * false` (`ai-dynamo/aisimulate@6f9a315:crates/core/src/replay/README.md`, `ai-dynamo/aisimulate@a976b2b:crates/core/src/replay/handoff.rs`), so a request handed off to a decode worker adds its
 * prompt blocks as decode load and none of its prompt tokens as prefill load. The production
 * preset lives in `KvPlacement` (src/router/placement.ts), the one the replay builds per pool, so
 * both tests go through it: directly, and through a disaggregated replay's decode-worker choice.
 *
 * The scenario: prompts of 3 tokens at block size 4 have no full block, so they add no decode
 * load but 3/4 of a block of prefill load each; a 4-token prompt adds one decode block. Counting
 * decode load only, every 3-token request avoids the worker holding the 4-token one (cost 1
 * against 0); counting prefill tokens too, the 4th such request goes to it (7/4 + 3/4 against
 * 9/4 + 3/4).
 */
import { describe, expect, it } from "vitest";
import type { KvRouterSpec } from "../../src/config/runSpec.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { buildPerRequest } from "../../src/report/perRequest.js";
import type { KvRouter } from "../../src/router/kvRouter.js";
import { KvPlacement } from "../../src/router/placement.js";
import { Replay } from "../../src/sim/replay.js";
import type { WorkerRole } from "../../src/util/workerRole.js";
import { disaggSpec, writeTrace } from "../helpers/specs.js";

const KV: KvRouterSpec = {
  policy: "kv_router",
  overlapScoreCredit: 1,
  prefillLoadScale: 1,
  temperature: 0,
  prefillLoadModel: "none",
};
const BLOCK = 4;
const NONE = new Float64Array(0);

/** Two workers; worker 0 holds a 4-token prompt (1 block), worker 1 `small` 3-token prompts. */
function loaded(role: WorkerRole, small: number): KvPlacement {
  const p = new KvPlacement(KV, role, 1, BLOCK);
  p.addWorker(0);
  p.addWorker(1);
  p.onDispatched(0, 100, Float64Array.of(7), 0, 1, 4, 0, Number.NaN);
  for (let i = 0; i < small; i++) p.onDispatched(1, 200 + i, NONE, 0, 0, 3, 0, Number.NaN);
  return p;
}

const routerOf = (p: KvPlacement): KvRouter => (p as unknown as { router: KvRouter }).router;

describe("decode-role KV router: decode load only", () => {
  it("keeps no prefill tokens for requests handed to it, only their prompt blocks", () => {
    const router = routerOf(loaded("decode", 3));
    expect(router.options.trackPrefillTokens).toBe(false);
    expect([router.activePrefillTokens(0, 0), router.activePrefillTokens(1, 0)]).toEqual([0, 0]);
    expect([router.activeBlocks(0), router.activeBlocks(1)]).toEqual([1, 0]);
  });

  it("sends a 3-token prompt to the worker with less decode load, however many prompts it holds", () => {
    const p = loaded("decode", 3);
    expect(p.choose(NONE, 0, 0, 3, 0)).toBe(1);
    const router = routerOf(p);
    // Costs: decode blocks live plus the request's new blocks (none); no prefill term.
    expect([router.lastCost(0), router.lastCost(1)]).toEqual([1, 0]);
    // The same load seen by a router that counts prefill tokens (an aggregated pool) picks worker 0:
    // the scenario tells the two apart.
    expect(loaded("aggregated", 3).choose(NONE, 0, 0, 3, 0)).toBe(0);
  });

  it("in a disaggregated replay, short prompts all avoid the decode worker holding the long one", async () => {
    // One prefill worker (one sequence at a time, 10 ms each) hands off at 10, 20, … 70 ms; the
    // KV transfers (100 ms per token) outlast the hand-offs, so every request is live on its
    // decode worker, still waiting for its first decode token, when the next one is routed.
    const rows = [
      { timestamp: 0, input_length: 4, output_length: 20, hash_ids: [1] },
      ...[1, 2, 3, 4, 5, 6].map((t) => ({
        timestamp: t,
        input_length: 3,
        output_length: 20,
        hash_ids: [10 + t],
      })),
    ];
    const spec = disaggSpec(writeTrace(rows), {
      decode: { replicas: 2 },
      transfer: { bandwidthGBps: 0.01 },
      router: KV,
    });
    const table = await loadWorkload(spec);
    const replay = new Replay(spec, table, await createRoleTimings(spec.engine), { capturePerRequest: true });
    const recs = buildPerRequest(replay.runSync());
    expect(recs.map((r) => r.source_held_ms)).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(recs.every((r) => r.output_length === 20)).toBe(true);
    const long = recs[0].decode_worker_idx;
    expect(long === 0 || long === 1).toBe(true);
    // Counting prompt tokens as decode-side load would send the 4th short prompt to `long`.
    expect(recs.slice(1).map((r) => r.decode_worker_idx)).toEqual(Array(6).fill(1 - long!));
  });
});
