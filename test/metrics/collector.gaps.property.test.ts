import { fc, test as fcTest } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { Collector, Terminal } from "../../src/metrics/collector.js";
import { DDSketch } from "../../src/metrics/ddsketch.js";
import { sketchStats } from "../../src/metrics/distribution.js";

/**
 * The collector folds token gaps per run of equal gaps (one weighted insert per pass and gap);
 * this reference folds them token by token, as the collector did before: every token one
 * `DDSketch.add` into each sketch, the moments by the original weighted-Welford formula with
 * weight 1. Percentiles, means, sums and std must be bit-identical on any gap stream, streamed or
 * held per request until a terminal state that may cut them off.
 */
class Moments {
  n = 0;
  mean = 0;
  m2 = 0;
  total = 0;
  add(value: number): void {
    const count = 1;
    const n = this.n + count;
    const delta = value - this.mean;
    this.mean += (delta * count) / n;
    this.m2 += delta * (value - this.mean) * count;
    this.n = n;
    this.total += value * count;
  }
}

class ReferenceGaps {
  readonly itl = new DDSketch();
  readonly throughput = new DDSketch();
  readonly itlMoments = new Moments();
  readonly throughputMoments = new Moments();
  private readonly tokens: Int32Array;
  private readonly last: Float64Array;
  private readonly held: (number[] | null)[] | null;

  constructor(count: number, hold: boolean) {
    this.tokens = new Int32Array(count);
    this.last = new Float64Array(count).fill(Number.NaN);
    this.held = hold ? new Array<number[] | null>(count).fill(null) : null;
  }

  onToken(req: number, t: number): void {
    if (this.tokens[req]++ > 0) {
      const gap = t - this.last[req];
      if (this.held === null) this.fold(gap);
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
    if (gaps !== null && status === Terminal.Completed) for (const g of gaps) this.fold(g);
    this.held[req] = null;
  }

  private fold(gap: number): void {
    this.itl.add(gap);
    this.itlMoments.add(gap);
    if (gap > 0) {
      this.throughput.add(1000 / gap);
      this.throughputMoments.add(1000 / gap);
    }
  }
}

const QS = [0, 1e-6, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1];

function expectSame(actual: DDSketch, sketch: DDSketch, moments: Moments): void {
  expect(actual.count).toBe(sketch.count);
  expect(actual.count).toBe(moments.n);
  expect(actual.mean).toBe(moments.mean);
  expect(actual.variance).toBe(moments.n === 0 ? 0 : Math.max(0, moments.m2 / moments.n));
  expect(actual.sum).toBe(moments.total);
  if (actual.count === 0) return;
  expect(actual.min).toBe(sketch.min);
  expect(actual.max).toBe(sketch.max);
  for (const q of QS) expect(actual.quantile(q)).toBe(sketch.quantile(q));
  expect(sketchStats(actual)).toEqual(sketchStats(sketch));
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

describe("Collector token gaps: weighted per run ≡ token by token", () => {
  fcTest.prop(
    [
      fc.integer({ min: 1, max: 24 }),
      fc.array(passArb, { minLength: 1, maxLength: 80 }),
      fc.boolean(),
      fc.double({ min: 0, max: 1000, noNaN: true, noDefaultInfinity: true }),
    ],
    { seed: 160216, numRuns: 400 },
  )("random gap streams, streamed or held (cut-off requests included)", (count, passes, hold, start) => {
    const c = new Collector(count, { holdGapsUntilTerminal: hold, captureHistory: false });
    const ref = new ReferenceGaps(count, hold);
    const open: number[] = [];
    for (let r = 0; r < count; r++) {
      c.onArrival(r, 0);
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
        expectSame(c.itl, ref.itl, ref.itlMoments);
        expectSame(c.perUserThroughput, ref.throughput, ref.throughputMoments);
      }
    }
    // Whatever is still open is cut off by the cap: its held gaps never count.
    expectSame(c.itl, ref.itl, ref.itlMoments);
    expectSame(c.perUserThroughput, ref.throughput, ref.throughputMoments);
  });
});
