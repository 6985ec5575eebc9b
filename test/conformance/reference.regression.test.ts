/**
 * fleetsim's Planner regression against the reference's (test/golden/reference-planner/regression.json,
 * written by scripts/reference/regression.py from the AIS core's FPM regression of aisimulate 0.13.0):
 * the same passes in, the same estimates, readiness and retained counts out, checkpoint by
 * checkpoint. No Python is needed here.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { WorkloadKind } from "../../src/planner/perfModel/features.js";
import { FpmRegressionModel } from "../../src/planner/perfModel/index.js";
import { fitStandardizedNnls } from "../../src/planner/perfModel/standardizedNnls.js";
import { forwardPassMetrics } from "../../src/planner/types.js";
import type { WorkerRole } from "../../src/util/workerRole.js";

interface Pass {
  readonly p: number;
  readonly n: number;
  readonly h: number;
  readonly b: number;
  readonly k: number;
  readonly wall?: number;
}

interface Scenario {
  readonly role: WorkerRole;
  readonly options: { readonly max: number; readonly min: number; readonly buckets: number };
  readonly passes: readonly Pass[];
  readonly queries: readonly Pass[];
  readonly every: number;
  /** Passes whose refits stop being models after a ready fit (regression.py `stale_scenarios`). */
  readonly stale?: boolean;
  readonly checkpoints: readonly {
    readonly after: number;
    readonly ready: boolean;
    readonly stores: Record<string, [boolean, number]>;
    readonly estimates_ms: readonly (number | null)[];
  }[];
}

const golden = JSON.parse(
  readFileSync(resolve(import.meta.dirname, "../golden/reference-planner/regression.json"), "utf8"),
) as { reference: { aisimulate: string }; scenarios: Scenario[] };

const work = (q: Pass) => ({
  prefillTokens: q.p,
  prefillRequests: q.n,
  prefillKvTokens: q.h,
  decodeRequests: q.b,
  decodeKvTokens: q.k,
});

describe(`the Planner regression against the reference's (aisimulate ${golden.reference.aisimulate})`, () => {
  it("has scenarios of every role, with estimates to compare", () => {
    expect(new Set(golden.scenarios.map((s) => s.role))).toEqual(
      new Set(["prefill", "decode", "aggregated"]),
    );
    const estimates = golden.scenarios.flatMap((s) => s.checkpoints.flatMap((c) => c.estimates_ms));
    expect(estimates.filter((e) => e !== null).length).toBeGreaterThan(1000);
    expect(estimates.filter((e) => e === null).length).toBeGreaterThan(50);
    // Some scenarios outgrow their stores, so retention (which pass is retired) is compared too.
    const evicting = golden.scenarios.filter(
      (s) => s.passes.filter((p) => (p.wall ?? 0) > 0).length > s.options.max,
    );
    expect(evicting.length).toBeGreaterThanOrEqual(3);
    expect(golden.scenarios.filter((s) => s.stale === true).length).toBeGreaterThanOrEqual(6);
  });

  // Counted by the scenarios below: checkpoints where a store is ready on the plane it kept
  // although a fit of the passes it now retains is not a model.
  let keptPlanes = 0;

  golden.scenarios.forEach((s, i) => {
    it(`scenario ${i}: ${s.role}, ${s.passes.length} passes, keep ${s.options.max}, ready at ${s.options.min}, ${s.options.buckets} cells`, () => {
      const m = new FpmRegressionModel(s.role, {
        maxNumFpmSamples: s.options.max,
        minObservations: s.options.min,
        bucketCount: s.options.buckets,
      });
      let fed = 0;
      for (const c of s.checkpoints) {
        for (; fed < c.after; fed++) {
          const p = s.passes[fed];
          m.addObservation(
            forwardPassMetrics(0, {
              wallTimeS: p.wall ?? 0,
              numPrefillRequests: p.n,
              sumPrefillTokens: p.p,
              sumPrefillKvTokens: p.h,
              numDecodeRequests: p.b,
              sumDecodeKvTokens: p.k,
            }),
          );
        }
        const at = `after ${c.after} passes`;
        expect(m.hasSufficientData(), `${at}: ready`).toBe(c.ready);
        for (const [kind, [ready, retained]] of Object.entries(c.stores)) {
          const store = m.store(kind as WorkloadKind);
          expect(store?.size, `${at}: ${kind} retained`).toBe(retained);
          expect(store?.ready, `${at}: ${kind} ready`).toBe(ready);
          if (store?.ready === true) {
            const all = store.retainedSamples();
            const refit = fitStandardizedNnls(
              all.map((r) => r.x),
              all.map((r) => r.y),
              2,
              s.options.min,
            );
            if (refit === null) keptPlanes++;
          }
        }
        c.estimates_ms.forEach((want, q) => {
          const got = m.estimateMs(work(s.queries[q]));
          if (want === null) expect(got, `${at}: query ${q}`).toBeNull();
          else {
            expect(got, `${at}: query ${q}`).not.toBeNull();
            expect(Math.abs(got! - want), `${at}: query ${q}: ${got} vs ${want} ms`).toBeLessThanOrEqual(
              1e-9 * Math.max(1, Math.abs(want)),
            );
          }
        });
      }
    });
  });

  it("keeps a ready store's plane when its refit is not a model (the stale scenarios exercise it)", () => {
    expect(keptPlanes).toBeGreaterThanOrEqual(10);
  });
});
