/**
 * A KV-aware router matches and counts every prompt block of a request (docs/routing.md), so a
 * pool with one has a lazily hashed row's hashes written before its placement sees them
 * (traffic/mooncake/stream.ts "Lazy hashes"); round robin reads none and leaves the row as it is.
 */
import { describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/cluster/workerPool.js";
import type { RouterSpec } from "../../src/config/runSpec.js";
import type { KvRouting, Placement } from "../../src/router/placement.js";
import { FixedTiming } from "../../src/timing/fixed.js";
import type { PromptHashCompleter, RequestSource } from "../../src/traffic/requestSource.js";
import { kvOrRoundRobin, role } from "../helpers/specs.js";

/** One row of three full blocks, of which only the first is hashed until it is completed. */
class OneLazyRow implements PromptHashCompleter {
  readonly array = new Float64Array(4);
  hashed = 1;
  completions = 0;

  constructor() {
    this.array[1] = 101;
  }

  completePromptHashes(_row: number, out: Float64Array, outStart: number): void {
    this.completions++;
    out.set([101, 102, 103], outStart);
    this.hashed = 3;
  }

  /** The calls of `RequestSource` a pool makes when it places the row. */
  source(): RequestSource {
    const partial: Partial<RequestSource> = {
      hashes: () => this.array,
      hashStart: () => 1,
      hashCount: () => 3,
      hashedCount: () => this.hashed,
      hashCompleter: this,
      inputLength: () => 12,
    };
    return partial as RequestSource;
  }
}

/** A pool of two ready workers whose placement records the hashes each call was given. */
function recordingPool(router: RouterSpec): { pool: WorkerPool; seen: number[][] } {
  const pool = new WorkerPool(
    0,
    "aggregated",
    role({ replicas: 2, blockSize: 4 }),
    new FixedTiming(10, 2),
    router,
    {
      onAdmit() {},
    },
  );
  pool.markReady(0, 0);
  pool.markReady(1, 0);
  const seen: number[][] = [];
  const placement = pool.placement as Placement & { onDispatched?: KvRouting["onDispatched"] };
  const choose = placement.choose.bind(placement);
  placement.choose = (hashes, offset, count, isl, now) => {
    seen.push(Array.from(hashes.subarray(offset, offset + count)));
    return choose(hashes, offset, count, isl, now);
  };
  const routing = pool.kvRouting;
  if (routing !== null) {
    const dispatched = routing.onDispatched;
    Object.defineProperty(routing, "onDispatched", {
      value: (...args: Parameters<KvRouting["onDispatched"]>) => {
        const [, , hashes, offset, count] = args;
        seen.push(Array.from(hashes.subarray(offset, offset + count)));
        dispatched(...args);
      },
    });
  }
  return { pool, seen };
}

describe("a pool's placement sees a lazily hashed row", () => {
  it("a KV router gets every prompt hash, at choice and at dispatch", () => {
    const row = new OneLazyRow();
    const source = row.source();
    const { pool, seen } = recordingPool(kvOrRoundRobin(true));
    const slot = pool.chooseSlot(source, 0, 0);
    pool.noteDispatched(source, 0, slot, 0, Number.NaN);
    expect(row.completions).toBe(1);
    expect(seen).toEqual([
      [101, 102, 103],
      [101, 102, 103],
    ]);
  });

  it("round robin reads none: the row stays hashed as far as lookups reach", () => {
    const row = new OneLazyRow();
    const source = row.source();
    const { pool } = recordingPool(kvOrRoundRobin(false));
    const slot = pool.chooseSlot(source, 0, 0);
    pool.noteDispatched(source, 0, slot, 0, Number.NaN);
    expect(row.completions).toBe(0);
    expect(row.hashed).toBe(1);
  });
});
