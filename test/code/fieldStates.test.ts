/**
 * Field states (docs/performance.md "Field states"): the replay's hot classes put their fields in
 * the states V8 would otherwise move them to mid-replay (an integer field taking its first double,
 * a field changed for the first time long after its initialization). Each such first change made
 * V8 throw away the optimized code that relied on the old state and compile it again, on the
 * replay's path. Each case below compiles a function on a fresh object, runs the event that used
 * to change a field late, and checks that the function is still optimized: V8's own test
 * intrinsics (`--allow-natives-syntax`), in a child process running the sources. (`ExactSum`'s
 * add counter, pinned too, deoptimized `addMany` in the seed replay's trace, but no small case
 * here reproduces that compilation; the replay trace is in docs/performance.md.)
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/configHelpers.js";

const ROOT = resolve(import.meta.dirname, "../..");
const src = (path: string): string => pathToFileURL(join(ROOT, "src", path)).href;

/** The child's script: one line `name true|false` per case (still optimized after the late event). */
const SCRIPT = `
import { ExactMoments, ExactSum } from "${src("metrics/exactSum.ts")}";
import { GapRuns } from "${src("metrics/tokenGaps.ts")}";
import { KvBlockPool } from "${src("engine/kvBlockPool.ts")}";
import { SequenceQueue } from "${src("engine/sequenceQueue.ts")}";
import { makeSequence } from "${src("engine/sequence.ts")}";

// Bit 4 of %GetOptimizationStatus: the function runs optimized code.
const optimized = (f) => (%GetOptimizationStatus(f) & 16) !== 0;
/** Optimizes \`run\`, a function of one fresh object \`make()\` that calls the methods under test. */
function compile(run, make) {
  %PrepareFunctionForOptimization(run);
  for (let i = 0; i < 20; i++) run(make());
  %OptimizeFunctionOnNextCall(run);
  run(make());
  if (!optimized(run)) throw new Error("the case's function did not optimize");
}
const report = (name, f) => console.log(name, optimized(f));
const values = new Float64Array([10.5, 11.25, 12]);
const weights = new Float64Array([3, 4, 1]);

// Moments: code compiled while counts were integers (one sample at a time), then the first batch
// of a decode run (its weights summed as doubles).
{
  const addOne = (m) => { m.add(10.5, 1); return m.count; };
  compile(addOne, () => new ExactMoments());
  new ExactMoments().addMany(values, weights, 3, true);
  addOne(new ExactMoments());
  report("moments", addOne);
}

// Gap folds: folds and their sketches compiled, then a Planner tick's snapshot of them.
{
  const fold = (g) => { g.foldMany(12.5, 3); g.foldMany(13.75, 2); return g.sketch("itl").count; };
  compile(fold, () => new GapRuns());
  const runs = new GapRuns();
  fold(runs);
  runs.snapshot();
  fold(new GapRuns());
  report("gaps", fold);
}

// KV pool: allocation and owner-only releases compiled, then the first eviction from an
// owner-only run (the runs' ring heads move for the first time).
{
  const ids = new Int32Array(8);
  const cycle = (pool) => {
    for (let i = 0; i < 3; i++) pool.releaseOwnerOnlyRun(ids, 0, pool.allocateInto(ids, 0, 4));
    return pool;
  };
  compile(cycle, () => new KvBlockPool(64));
  // The same calls through other code (the compiled function has never seen a full cache).
  const full = new KvBlockPool(8);
  for (let i = 0; i < 9; i++) full.releaseOwnerOnlyRun(ids, 0, full.allocateInto(ids, 0, 4));
  cycle(new KvBlockPool(64));
  report("pool", cycle);
}

// Waiting queue: admission compiled, then a queue's first growth past 16 requests.
{
  const seq = makeSequence(0, 10, 1, new Float64Array(0), 0, 0, null);
  const roundTrip = (q) => { q.pushBack(seq); q.pushBack(seq); q.popFront(); return q.front(); };
  compile(roundTrip, () => new SequenceQueue());
  const q = new SequenceQueue();
  for (let i = 0; i < 40; i++) q.pushBack(seq);
  roundTrip(new SequenceQueue());
  report("queue", roundTrip);
}
`;

describe("field states of the replay's hot classes (V8)", () => {
  it("a late first change of a field does not throw away code compiled before it", () => {
    const dir = tempDir();
    const script = join(dir, "fieldStates.mjs");
    writeFileSync(script, SCRIPT);
    const r = spawnSync(process.execPath, ["--allow-natives-syntax", "--import", "tsx", script], {
      cwd: ROOT,
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const results = Object.fromEntries(
      r.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ")),
    );
    expect(results).toEqual({ moments: "true", gaps: "true", pool: "true", queue: "true" });
  });
});
