/**
 * The numbered invariants registry (src/sim/invariants.ts): it and docs/architecture.md list the
 * same invariants word for word, and every invariant has a case here that feeds its check a
 * deliberately corrupted state (or a seeded bookkeeping bug) and expects a violation naming its
 * id, so removing a check fails its case. `CASES` is keyed by `InvariantId`: a new registry
 * entry without a case does not type-check.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/cluster/workerPool.js";
import type { RunSpec } from "../../src/config/runSpec.js";
import type { VllmEngine } from "../../src/engine/vllmEngine.js";
import { Collector, Terminal } from "../../src/metrics/collector.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import {
  INVARIANTS,
  InvariantChecker,
  type InvariantId,
  InvariantViolation,
  invariantsEnabledByEnv,
} from "../../src/sim/invariants.js";
import { Replay } from "../../src/sim/replay.js";
import { role, traceSpec, writeTrace } from "../helpers/specs.js";

/** Runs `f` and returns the invariant it violated (fails when it throws anything else or nothing). */
function violated(f: () => unknown): InvariantId {
  try {
    f();
  } catch (e) {
    if (e instanceof InvariantViolation) {
      expect(e.message).toContain(`invariant ${e.id} violated`);
      return e.id;
    }
    throw e;
  }
  throw new Error("no invariant was violated");
}

function twoRequestSpec(): RunSpec {
  return traceSpec(
    writeTrace([
      { timestamp: 0, input_length: 8, output_length: 3, hash_ids: [1, 2] },
      { timestamp: 1000, input_length: 8, output_length: 3, hash_ids: [3, 4] },
    ]),
  );
}

async function replayOf(spec: RunSpec): Promise<Replay> {
  const [table, timings] = await Promise.all([loadWorkload(spec), createRoleTimings(spec.engine)]);
  return new Replay(spec, table, timings, { capturePerRequest: false, checkInvariants: true });
}

/** A two-worker aggregated pool (1 GPU each) outside any replay, for the checker to look at. */
async function loosePool(): Promise<WorkerPool> {
  const spec = twoRequestSpec();
  const timings = await createRoleTimings(spec.engine);
  if (timings.mode !== "aggregated") throw new Error("unreachable");
  return new WorkerPool(0, "aggregated", role({ replicas: 2 }), timings.aggregated, spec.router, {
    onAdmit() {},
  });
}

function checkerOf(
  pool: WorkerPool,
  over: { collector?: Collector; holdsNothing?: boolean; gpuBudget?: number | null } = {},
): InvariantChecker {
  return new InvariantChecker({
    pools: [pool],
    collector: over.collector ?? new Collector(2, { holdGapsUntilTerminal: false, captureHistory: false }),
    holdsNothing: () => over.holdsNothing ?? false,
    reservedBySlot: () => [],
    gpuBudget: over.gpuBudget ?? null,
  });
}

const CASES: Record<InvariantId, () => Promise<InvariantId[]>> = {
  // A second terminal state (a path that ends a request twice), and an arrived request left open.
  "INV-1": async () => {
    const replay = await replayOf(twoRequestSpec());
    const result = replay.runSync();
    expect(result.requests.columns().status[0]).toBe(Terminal.Completed);
    const twice = violated(() => replay.onEnded(0, result.endTimeMs, Terminal.Completed));
    const pool = await loosePool();
    const collector = new Collector(2, { holdGapsUntilTerminal: false, captureHistory: false });
    collector.onArrival(1, 0);
    const open = violated(() => checkerOf(pool, { collector }).atEnd(0, true, [], () => 0));
    return [twice, open];
  },
  // A KV block allocated behind the engine's back: referenced, but owned by no request.
  "INV-2": async () => {
    const pool = await loosePool();
    const checker = checkerOf(pool);
    (pool.engines[0] as VllmEngine).pool.allocate();
    return [violated(() => checker.afterTick(0))];
  },
  // The cluster schedules an event before the current time.
  "INV-3": async () => {
    const replay = await replayOf(twoRequestSpec());
    while (replay.virtualTimeMs === 0) replay.step(1);
    replay.scheduleWorkerReady(replay.virtualTimeMs / 2, 0);
    return [violated(() => replay.step(1))];
  },
  // A worker started beyond the budget (2 workers × 1 GPU at the start, budget 1 → limit 2).
  "INV-4": async () => {
    const pool = await loosePool();
    const checker = checkerOf(pool, { gpuBudget: 1 });
    checker.afterTick(0);
    pool.addWorker(false, 0);
    return [violated(() => checker.afterTick(5))];
  },
  // A draining worker that holds nothing but stays provisioned.
  "INV-5": async () => {
    const pool = await loosePool();
    const checker = checkerOf(pool, { holdsNothing: true });
    checker.afterTimestamp(0);
    pool.drain(1);
    return [violated(() => checker.afterTimestamp(5))];
  },
  // A worker added without a lifecycle record: worker-seconds no longer match the records.
  "INV-6": async () => {
    const pool = await loosePool();
    const checker = checkerOf(pool);
    pool.addWorker(true, 1000);
    pool.accrue(2000);
    return [violated(() => checker.atEnd(2000, false, [], () => 0))];
  },
  // A completed request short of its output tokens.
  "INV-7": async () => {
    const pool = await loosePool();
    const collector = new Collector(2, { holdGapsUntilTerminal: false, captureHistory: false });
    collector.onArrival(0, 0);
    collector.onToken(0, 1);
    collector.onTerminal(0, 2, Terminal.Completed);
    return [violated(() => checkerOf(pool, { collector }).atEnd(2, false, [], () => 2))];
  },
  // A terminal time before the arrival.
  "INV-8": async () => {
    const pool = await loosePool();
    const collector = new Collector(2, { holdGapsUntilTerminal: false, captureHistory: false });
    collector.onArrival(0, 10);
    collector.onTerminal(0, 5, Terminal.Rejected);
    return [violated(() => checkerOf(pool, { collector }).atEnd(10, false, [], () => 0))];
  },
};

describe("invariants registry", () => {
  it.each(Object.keys(INVARIANTS) as InvariantId[])(
    "%s: its check catches a seeded bookkeeping bug",
    async (id) => {
      const ids = await CASES[id]();
      expect(ids.length).toBeGreaterThan(0);
      for (const got of ids) expect(got).toBe(id);
    },
  );

  it("docs/architecture.md lists the registry word for word", () => {
    const doc = readFileSync("docs/architecture.md", "utf8");
    const section = doc.slice(
      doc.indexOf("## Invariants\n"),
      doc.indexOf("\n## ", doc.indexOf("## Invariants\n") + 1),
    );
    const rows = [...section.matchAll(/^\| (INV-\d+) +\| (.+?) +\| (.+?) +\|$/gm)].map((m) => [
      m[1],
      m[2],
      m[3],
    ]);
    expect(rows).toEqual(Object.entries(INVARIANTS).map(([id, inv]) => [id, inv.statement, inv.checkedIn]));
  });

  it("is checked on every replay of the test suite", () => {
    expect(invariantsEnabledByEnv()).toBe(true);
  });
});
