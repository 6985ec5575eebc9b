/**
 * `estimateQueuedPrefillTimeS` is written over scratch arrays (src/planner/perfModel/query.ts); the
 * reference's reading of it — a set of breakpoints, a sort, a batch per interval
 * (`ai-dynamo/dynamo@0c11ddf:components/src/dynamo/planner/core/perf_model/engine_query.py`) — is
 * kept here as plain code, and the two must give the same double (or both null) for any group,
 * query and model, including models that cannot price some passes.
 */
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import type { QueryPerfModel } from "../../src/planner/perfModel/index.js";
import {
  estimateQueuedPrefillTimeS,
  type PrefillQuery,
  syntheticPrefill,
} from "../../src/planner/perfModel/query.js";
import type { ForwardPassMetrics } from "../../src/planner/types.js";
import { forwardPass } from "../helpers/planner.js";

/** The query as written before: a set, a sort and a batch per pass. */
function reference(
  model: QueryPerfModel,
  group: readonly ForwardPassMetrics[],
  q: PrefillQuery,
): number | null {
  if (model.workerType === "decode" || group.length === 0) return null;
  const mbt = q.maxNumBatchedTokens;
  if (!(mbt > 0)) return null;
  const ranks = group.map((f) => syntheticPrefill(model, f, q));
  const plans = ranks.map((r) => ({ full: Math.floor(r.tokens / mbt), tail: r.tokens % mbt }));
  if (plans.every((p) => p.full === 0 && p.tail === 0)) return 0;
  const breakpoints = new Set<number>([0]);
  for (const p of plans) {
    if (p.full > 0) breakpoints.add(p.full);
    if (p.tail > 0) breakpoints.add(p.full + 1);
  }
  const points = [...breakpoints].sort((a, b) => a - b);
  let total = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i];
    let worst = 0;
    for (let k = 0; k < ranks.length; k++) {
      const plan = plans[k];
      const chunk = start < plan.full ? mbt : start === plan.full ? plan.tail : 0;
      const t = model.forwardPassS(
        chunk,
        chunk === 0 ? 0 : Math.max(1, ranks[k].requests),
        ranks[k].decodeRequests,
        ranks[k].decodeKv,
      );
      if (t === null || !Number.isFinite(t)) return null;
      worst = Math.max(worst, t);
    }
    total += worst * (points[i + 1] - start);
  }
  return total;
}

/** A model whose pass time is a nonlinear function of the pass, null past `unpriced` prefill tokens. */
function model(workerType: QueryPerfModel["workerType"], avgIsl: number, unpriced: number): QueryPerfModel {
  return {
    workerType,
    avgIsl,
    avgDecodeLength: 0,
    avgPrefillTokens: 0,
    avgNumPrefill: 0,
    addObservation() {},
    hasSufficientData: () => true,
    forwardPassS: (pt, pr, dr, dk) =>
      pt > unpriced
        ? null
        : 1e-3 + 1.7e-6 * pt + 3.1e-5 * pr + 2.3e-6 * Math.sqrt(dk) * (1 + dr / 7) + 1e-9 * pt * pt,
  };
}

const rank = fc.record({
  numQueuedPrefill: fc.integer({ min: 0, max: 40 }),
  sumQueuedPrefillTokens: fc.integer({ min: 0, max: 60_000 }),
  numDecodeRequests: fc.integer({ min: 0, max: 300 }),
  sumDecodeKvTokens: fc.integer({ min: 0, max: 400_000 }),
  numQueuedDecode: fc.integer({ min: 0, max: 20 }),
  sumQueuedDecodeKvTokens: fc.integer({ min: 0, max: 50_000 }),
});

const query = fc.record({
  maxNumBatchedTokens: fc.constantFrom(0, 512, 2048, 8192, 1000.5),
  kvHitRate: fc.option(fc.double({ min: -0.5, max: 1.5, noNaN: true }), { nil: undefined }),
  queueScale: fc.option(fc.constantFrom(0, 1, 1.5, 2, 4 / 3), { nil: undefined }),
  decodeScale: fc.option(fc.constantFrom(1, 1.5, 2), { nil: undefined }),
  includeQueuedDecode: fc.option(fc.boolean(), { nil: undefined }),
  addNextRequest: fc.option(fc.boolean(), { nil: undefined }),
});

describe("estimateQueuedPrefillTimeS: the same answers as the per-object reading", () => {
  test.prop(
    [
      fc.array(rank, { minLength: 0, maxLength: 5 }),
      query,
      fc.constantFrom("aggregated", "prefill", "decode") as fc.Arbitrary<QueryPerfModel["workerType"]>,
      fc.constantFrom(0, 700, 3000.25),
      fc.constantFrom(Number.POSITIVE_INFINITY, 8192, 600),
    ],
    { seed: 20261207, numRuns: 2000 },
  )("any group, query and model", (ranks, q, workerType, avgIsl, unpriced) => {
    const group = ranks.map((r, i) => forwardPass(i, r));
    const m = model(workerType, avgIsl, unpriced);
    const expected = reference(m, group, q);
    const got = estimateQueuedPrefillTimeS(m, group, q);
    expect(Object.is(got, expected) || got === expected).toBe(true);
  });
});
