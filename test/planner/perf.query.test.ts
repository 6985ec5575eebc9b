import { describe, expect, it } from "vitest";
import {
  bootstrapFpmSha256,
  bootstrapLimitsFromCaps,
  bootstrapObservations,
  canonicalJson,
} from "../../src/planner/perfModel/bootstrap.js";
import { FpmRegressionModel } from "../../src/planner/perfModel/index.js";
import {
  estimateQueuedPrefillTimeS,
  estimateScheduledDecodeItlS,
  queryGroups,
} from "../../src/planner/perfModel/query.js";
import type { EngineCapabilities, ForwardPassMetrics } from "../../src/planner/types.js";
import { fittedAggModel, forwardPass, REGRESSION_OPTS } from "../helpers/planner.js";

function fpm(f: Partial<ForwardPassMetrics>): ForwardPassMetrics {
  return forwardPass(1, { wallTimeS: 0.01, ...f });
}

const OPTS = REGRESSION_OPTS;

const aggModel = () => fittedAggModel();

describe("queued-prefill and decode-ITL queries (`ai-dynamo/dynamo@0c11ddf:components/src/dynamo/planner/core/perf_model/engine_query.py` current semantics)", () => {
  const live = fpm({
    numQueuedPrefill: 3,
    sumQueuedPrefillTokens: 3000,
    numDecodeRequests: 50,
    sumDecodeKvTokens: 10000,
    numQueuedDecode: 10,
    sumQueuedDecodeKvTokens: 2000,
  });

  it("agg TTFT: discounted backlog + next request, scheduled decode riding along", () => {
    const m = aggModel();
    const q = { maxNumBatchedTokens: 2048, kvHitRate: 0.5 };
    // (3000 + 1000)·0.5 = 2000 tokens in one pass with 10 000 decode KV.
    expect(estimateQueuedPrefillTimeS(m, [live], q)).toBeCloseTo(0.001 + 0.02 + 0.01, 12);
    // Consolidation view: queued decode joins and decode doubles (c = 2): 24 000 KV.
    const post = { ...q, decodeScale: 2, includeQueuedDecode: true };
    expect(estimateQueuedPrefillTimeS(m, [live], post)).toBeCloseTo(0.001 + 0.02 + 0.024, 12);
    // Next request alone: 1000·0.5 = 500 tokens.
    expect(estimateQueuedPrefillTimeS(m, [live], { ...q, queueScale: 0 })).toBeCloseTo(
      0.001 + 0.005 + 0.01,
      12,
    );
  });

  it("agg ITL: queued decode + one typical request, with the learned prefill mix", () => {
    const m = aggModel();
    // kv = 10 000 + 2000 + 200 = 12 200; prefill mix ⌈1500⌉ tokens.
    expect(estimateScheduledDecodeItlS(m, [live])).toBeCloseTo(0.001 + 0.015 + 0.0122, 12);
    // + queued prompts as KV, all ×1.5: (12 000 + 3000)·1.5 + 200 = 22 700.
    const post = estimateScheduledDecodeItlS(m, [live], { decodeScale: 1.5, includeQueuedPrefillAsKv: true });
    expect(post).toBeCloseTo(0.001 + 0.015 + 0.0227, 12);
  });

  it("a prefill model has no decode ITL and a zero backlog costs nothing", () => {
    const p = new FpmRegressionModel("prefill", OPTS);
    for (const t of [100, 200, 300])
      p.addObservation(fpm({ sumPrefillTokens: t, numPrefillRequests: 1, wallTimeS: t / 1000 }));
    expect(estimateScheduledDecodeItlS(p, [live])).toBeNull();
    const empty = new FpmRegressionModel("prefill", OPTS);
    for (const t of [100, 200, 300]) empty.addObservation(fpm({ sumPrefillTokens: t, wallTimeS: t / 1000 }));
    expect(empty.avgIsl).toBe(0);
    expect(estimateQueuedPrefillTimeS(empty, [fpm({})], { maxNumBatchedTokens: 2048 })).toBe(0);
    expect(estimateQueuedPrefillTimeS(p, [live], { maxNumBatchedTokens: 0 })).toBeNull();
  });

  it("prices a multi-rank group by breakpoints, each pass as slow as its slowest rank", () => {
    const p = new FpmRegressionModel("prefill", OPTS);
    for (const t of [100, 200, 300, 400, 500])
      p.addObservation(fpm({ sumPrefillTokens: t, numPrefillRequests: 1, wallTimeS: t / 1000 }));
    // avg_isl 300: rank 0 drains 5300 = 2×2048 + 1204, rank 1 7300 = 3×2048 + 1156.
    const r0 = fpm({ dpRank: 0, sumQueuedPrefillTokens: 5000 });
    const r1 = fpm({ dpRank: 1, sumQueuedPrefillTokens: 7000 });
    const t = estimateQueuedPrefillTimeS(p, [r0, r1], { maxNumBatchedTokens: 2048 });
    expect(t).toBeCloseTo(2 * 2.048 + 2.048 + 1.156, 12);
    expect(queryGroups([r1, r0], true)).toEqual([[r0, r1]]);
    expect(queryGroups([r1, r0])).toEqual([[r0], [r1]]);
  });
});

describe("bootstrap FPMs (`ai-dynamo/dynamo@c78c42c:components/src/dynamo/replay/planner.py`)", () => {
  const timing = {
    prefillMs: (_count: number, isl: number, _prefix: number) => 5 + 0.01 * isl,
    decodeMs: (_batch: number, kv: number, _ctx: number, _total: number) => 2 + 0.0001 * kv,
  };
  const limits = { maxNumBatchedTokens: 2048, maxNumSeqs: 64, kvCapacityTokens: 100_000 };

  it("spans the prefill grid range(100, MBT+1, (MBT−100)//g)", () => {
    const pre = bootstrapObservations("prefill", timing, limits);
    expect(pre.map((f) => f.sumPrefillTokens)).toEqual([100, 343, 586, 829, 1072, 1315, 1558, 1801, 2044]);
    expect(pre[0]).toMatchObject({ numPrefillRequests: 1, wallTimeS: 0.006, numDecodeRequests: 0 });
    const defaults = bootstrapObservations("prefill", timing, { ...limits, maxNumBatchedTokens: null });
    expect(defaults.at(-1)?.sumPrefillTokens).toBe(8188);
  });

  it("spans decode contexts × batch sizes while bs·ctx fits the KV capacity", () => {
    const dec = bootstrapObservations("decode", timing, limits);
    const per = (ctx: number) => dec.filter((f) => f.sumDecodeKvTokens / f.numDecodeRequests === ctx);
    expect(per(500).map((f) => f.numDecodeRequests)).toEqual([1, 9, 17, 25, 33, 41, 49, 57]);
    expect(per(2000).map((f) => f.numDecodeRequests)).toEqual([1, 9, 17, 25, 33, 41, 49]);
    expect(per(4000).map((f) => f.numDecodeRequests)).toEqual([1, 9, 17, 25]);
    expect(per(8000).map((f) => f.numDecodeRequests)).toEqual([1, 9]);
    expect(dec).toHaveLength(21);
    expect(per(4000)[3].wallTimeS).toBeCloseTo((2 + 0.0001 * 100_000) / 1000, 15);
  });

  it("drops zero-time points and bootstraps a model that recovers the timing line", () => {
    const zero = { ...timing, prefillMs: () => 0 };
    expect(bootstrapObservations("prefill", zero, limits)).toEqual([]);
    const m = new FpmRegressionModel("prefill", OPTS);
    m.loadBenchmarkFpms(bootstrapObservations("prefill", timing, limits));
    expect(m.forwardPassS(1000, 1, 0, 0)).toBeCloseTo(0.005 + 0.01, 12);
  });

  it("hashes canonical JSON deterministically", () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 1 }] })).toBe('{"a":[{"c":1,"d":2}],"b":1}');
    const pre = bootstrapObservations("prefill", timing, limits);
    const dec = bootstrapObservations("decode", timing, limits);
    const h = bootstrapFpmSha256(pre, dec);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(bootstrapFpmSha256([...pre], [...dec])).toBe(h);
    expect(bootstrapFpmSha256(pre, dec.slice(1))).not.toBe(h);
  });

  it("derives per-rank limits from capabilities", () => {
    const caps: EngineCapabilities = {
      numGpu: 2,
      gpuCostPerReplica: 2,
      maxNumBatchedTokens: 4096,
      maxNumSeqs: 128,
      contextLength: 8192,
      maxKvTokens: 200_000,
      kvCacheBlockSize: 16,
      speculativeNextn: 0,
      attentionData: 2,
    };
    expect(bootstrapLimitsFromCaps(caps)).toEqual({
      maxNumBatchedTokens: 4096,
      maxNumSeqs: 128,
      kvCapacityTokens: 100_000,
    });
  });
});
