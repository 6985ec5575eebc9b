import { fc, test as fcTest } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { Collector, Terminal } from "../../src/metrics/collector.js";
import { DDSketch } from "../../src/metrics/ddsketch.js";
import { type DistStats, sketchStats } from "../../src/metrics/distribution.js";

import { exactMeanVariance } from "./exactRational.js";

/**
 * The collector folds token gaps once per pass and gap into the bins and into exact moment sums
 * (taking a cut-off request's back out); this reference folds them token by token into the
 * sketches (`DDSketch.add`) and keeps every gap, computing mean and variance in exact rational
 * arithmetic when read. Percentiles, min, max, means and std must be bit-identical on any gap
 * stream, streamed or held per request until a terminal state that may cut them off, and whenever
 * they are read.
 */
class ExactReference {
  private readonly values: number[] = [];
  add(_worker: number, value: number): void {
    this.values.push(value);
  }
  get n(): number {
    return this.values.length;
  }
  combined(): { mean: number; variance: number } {
    return exactMeanVariance(this.values);
  }
}

class ReferenceGaps {
  readonly itl = new DDSketch();
  readonly throughput = new DDSketch();
  readonly itlMoments = new ExactReference();
  readonly throughputMoments = new ExactReference();
  private readonly tokens: Int32Array;
  private readonly last: Float64Array;
  private readonly held: (number[] | null)[] | null;

  constructor(
    count: number,
    hold: boolean,
    private readonly workerOf: (req: number) => number,
  ) {
    this.tokens = new Int32Array(count);
    this.last = new Float64Array(count).fill(Number.NaN);
    this.held = hold ? new Array<number[] | null>(count).fill(null) : null;
  }

  onToken(req: number, t: number): void {
    if (this.tokens[req]++ > 0) {
      const gap = t - this.last[req];
      if (this.held === null) this.fold(gap, this.workerOf(req));
      else {
        const held = this.held[req] ?? [];
        held.push(gap);
        this.held[req] = held;
      }
    }
    this.last[req] = t;
  }

  onTerminal(req: number, status: number): void {
    if (this.held === null) return;
    const gaps = this.held[req];
    if (gaps !== null && status === Terminal.Completed)
      for (const g of gaps) this.fold(g, this.workerOf(req));
    this.held[req] = null;
  }

  private fold(gap: number, worker: number): void {
    this.itl.add(gap);
    this.itlMoments.add(worker, gap);
    if (gap > 0) {
      this.throughput.add(1000 / gap);
      this.throughputMoments.add(worker, 1000 / gap);
    }
  }
}

const QS = [0, 1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1];

function expectSame(actual: DDSketch, stats: DistStats, sketch: DDSketch, moments: ExactReference): void {
  expect(actual.count).toBe(sketch.count);
  expect(actual.count).toBe(moments.n);
  if (actual.count === 0) return;
  expect(actual.min).toBe(sketch.min);
  expect(actual.max).toBe(sketch.max);
  for (const q of QS) expect(actual.quantile(q)).toBe(sketch.quantile(q));
  expect(stats).toEqual(sketchStats(sketch, moments.combined()));
}

/** One pass: its duration (an index into a small set, so equal gaps recur across passes) and who gets a token. */
const passArb = fc.record({
  duration: fc.oneof(
    fc.constantFrom(0, 0.5, 1, 2, 12.5, 40),
    fc.double({ min: 0.001, max: 500, noNaN: true, noDefaultInfinity: true }),
  ),
  /** Per open request: token (0), skip this pass (1), or a terminal state (2: completed, 3: rejected, 4: timed out). */
  actions: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 0, maxLength: 12 }),
  /** Read the sketches after this pass (a flush mid-run). */
  read: fc.boolean(),
});

describe("Collector token gaps: weighted per pass ≡ token by token", () => {
  fcTest.prop(
    [
      fc.integer({ min: 1, max: 24 }),
      fc.array(passArb, { minLength: 1, maxLength: 80 }),
      fc.boolean(),
      fc.double({ min: 0, max: 1000, noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: 1, max: 4 }),
    ],
    { seed: 160216, numRuns: 400 },
  )(
    "random gap streams, streamed or held (cut-off requests included)",
    (count, passes, hold, start, workers) => {
      const c = new Collector(count, { holdGapsUntilTerminal: hold, captureHistory: false });
      // Requests spread over workers (their moments partitions), the first one never dispatched.
      const workerOf = (r: number): number => (r === 0 ? -1 : (r * 7) % workers);
      const ref = new ReferenceGaps(count, hold, workerOf);
      const open: number[] = [];
      for (let r = 0; r < count; r++) {
        c.onArrival(r, 0);
        if (workerOf(r) >= 0) c.onDispatch(r, 0, workerOf(r), 0, 0);
        open.push(r);
      }
      let t = start;
      for (const pass of passes) {
        t += pass.duration;
        // Tokens of one pass come in the batch's order, which rotates so that runs interleave.
        const batch = open.slice();
        for (let i = 0; i < batch.length; i++) {
          const req = batch[i];
          const action = pass.actions[i % Math.max(1, pass.actions.length)] ?? 0;
          if (action <= 5) {
            c.onToken(req, t);
            ref.onToken(req, t);
          } else if (action >= 7) {
            // A last token then completion, or an end that cuts the request off.
            const status =
              action === 7 ? Terminal.Completed : action === 8 ? Terminal.Rejected : Terminal.TimedOut;
            if (status === Terminal.Completed) {
              c.onToken(req, t);
              ref.onToken(req, t);
            }
            c.onTerminal(req, t, status);
            ref.onTerminal(req, status);
            open.splice(open.indexOf(req), 1);
          }
        }
        if (open.length > 1) open.push(open.shift()!);
        if (pass.read) {
          expectSame(c.itl, c.itlStats(), ref.itl, ref.itlMoments);
          expectSame(c.perUserThroughput, c.perUserThroughputStats(), ref.throughput, ref.throughputMoments);
        }
      }
      // Whatever is still open is cut off by the cap: its held gaps never count.
      expectSame(c.itl, c.itlStats(), ref.itl, ref.itlMoments);
      expectSame(c.perUserThroughput, c.perUserThroughputStats(), ref.throughput, ref.throughputMoments);
    },
  );
});

/** One plain-decode run of a worker: its batch (a subset of the open requests) and pass durations. */
const runArb = fc.record({
  worker: fc.integer({ min: 0, max: 3 }),
  pick: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
  durations: fc.array(
    fc.oneof(
      fc.constantFrom(0.5, 1, 12.5, 40),
      fc.double({ min: 0.001, max: 500, noNaN: true, noDefaultInfinity: true }),
    ),
    { minLength: 1, maxLength: 40 },
  ),
  /** Reverse the batch order and read the statistics after this run. */
  read: fc.boolean(),
  /**
   * A request that ends after this run (timed out when even, else completed), if it has not: its
   * held gaps, and the runs it alone still refers to, are freed while other requests hold theirs.
   */
  end: fc.option(fc.integer({ min: 0, max: 11 }), { nil: null }),
});

describe("Collector: a run's tokens at once ≡ pass by pass", () => {
  fcTest.prop(
    [
      fc.array(runArb, { minLength: 1, maxLength: 30 }),
      fc.boolean(),
      fc.constantFrom(0, 0.1, 7.25),
      fc.double({ min: 0, max: 1000, noNaN: true, noDefaultInfinity: true }),
    ],
    { seed: 160217, numRuns: 300 },
  )("onTokenRun gives onTokenRange's columns, bins and moments bit for bit", (runs, hold, offset, start) => {
    const count = 12;
    const byRun = new Collector(count, { holdGapsUntilTerminal: hold, captureHistory: false });
    const byPass = new Collector(count, { holdGapsUntilTerminal: hold, captureHistory: false });
    // Request r is served by worker r % 4: a run's batch is drawn from one worker's requests.
    for (const c of [byRun, byPass])
      for (let r = 0; r < count; r++) {
        c.onArrival(r, 0);
        c.onDispatch(r, 0, r % 4, 0, 0);
      }
    let t = start;
    const rows = new Int32Array(count);
    const ends = new Float64Array(64);
    const ended = new Set<number>();
    for (const run of runs) {
      let batch = 0;
      for (let r = 0; r < count; r++)
        if (r % 4 === run.worker && run.pick[r] && !ended.has(r)) rows[batch++] = r;
      if (batch === 0) continue;
      // Batch order rotates between runs (preemption and admission reorder a real batch).
      if (run.read && batch > 1) rows.subarray(0, batch).reverse();
      for (let j = 0; j < run.durations.length; j++) {
        t += run.durations[j];
        ends[j] = t;
        byPass.onTokenRange(rows, 0, batch, t + offset);
      }
      byRun.onTokenRun(rows, batch, ends, run.durations.length, offset);
      if (run.read) {
        expect(byRun.itlStats()).toEqual(byPass.itlStats());
        expect(byRun.perUserThroughputStats()).toEqual(byPass.perUserThroughputStats());
      }
      if (run.end !== null && !ended.has(run.end)) {
        ended.add(run.end);
        const status = run.end % 2 === 0 ? Terminal.TimedOut : Terminal.Completed;
        for (const c of [byRun, byPass]) c.onTerminal(run.end, t, status);
      }
    }
    // Some requests are cut off (a client timeout): their held gaps come back out of both.
    for (let r = 0; r < count; r++) {
      if (ended.has(r)) continue;
      const status = r % 3 === 0 ? Terminal.TimedOut : Terminal.Completed;
      for (const c of [byRun, byPass]) c.onTerminal(r, t + 1000, status);
    }
    expect(Array.from(byRun.tokens)).toEqual(Array.from(byPass.tokens));
    expect(Array.from(byRun.firstToken)).toEqual(Array.from(byPass.firstToken));
    expect(Array.from(byRun.secondToken)).toEqual(Array.from(byPass.secondToken));
    expect(Array.from(byRun.lastToken)).toEqual(Array.from(byPass.lastToken));
    expect(byRun.itlStats()).toEqual(byPass.itlStats());
    expect(byRun.perUserThroughputStats()).toEqual(byPass.perUserThroughputStats());
    expect(byRun.itl.count).toBe(byPass.itl.count);
    for (const q of QS) expect(byRun.itl.quantile(q)).toBe(byPass.itl.quantile(q));
  });
});
