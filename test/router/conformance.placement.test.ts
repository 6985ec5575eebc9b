/**
 * Conformance suite of the `Placement` interface (src/router/placement.ts, issue 15 "one
 * conformance suite per interface run against every implementation"): the contract every
 * request-placement policy must meet, whatever its scoring. Every implementation is built the way
 * the replay builds it, by `WorkerPool` from a `RouterSpec`, a role and a worker spec (the pool
 * picks the class, the role's KV-router preset, the attention-DP ranks and the block size), and is
 * driven through the calls the cluster makes (src/cluster/): `choose` → `lastOverlapBlocks` →
 * `onDispatched` (with a predicted prefill only when `wantsPrefillPrediction`), prefill completion,
 * free, KV events only when `wantsKvEvents` — those on the `kvRouting` capability, for a policy
 * that has one — and worker start / ready / drain / cancel / removal through the pool, so worker
 * ids only grow.
 *
 * Properties (from the interface's doc comments and docs/routing.md):
 *  1. `choose` returns a slot of a ready worker (never starting, draining, removed or cancelled),
 *     `worker × ranksPerWorker + rank`; with no ready worker it throws instead of returning a slot.
 *  2. `lastOverlapBlocks` is an integer in [0, count], never more than the leading prompt blocks the
 *     chosen slot reported stored (and not since removed), and 0 for a policy that listens to no KV
 *     events ("0 when it keeps none").
 *  3. Deterministic: two fresh instances fed the same calls make the same choices, also when the
 *     prompt blocks come in a different buffer at a different offset (only `hashes[offset ..
 *     offset+count)` counts) and `choose` leaves the caller's buffer as it was.
 *  4. Identical requests over equal idle slots spread over all of them, one each (round robin by
 *     rotation; the KV router by load, at temperature 0 — with softmax sampling it is random).
 *  5. A worker joining after others becomes a candidate (chosen within one slot count of dispatches);
 *     a draining worker is never chosen again, while its in-flight requests still take their
 *     lifecycle calls; later workers get fresh ids and are chosen.
 *  6. Lifecycle calls and KV events a policy ignores (or does not know the request / block of) do not
 *     throw: KV events on any slot, repeated stores and removals, prefill completion twice, free
 *     without prefill completion, completion or free of a request it never saw, `choose` without a
 *     dispatch (the replay's rejected hand-off), `setCostParameters` where present.
 */
import { describe, expect, it } from "vitest";
import { WorkerPool, WorkerState } from "../../src/cluster/workerPool.js";
import type { RouterSpec } from "../../src/config/runSpec.js";
import type { KvRouting, Placement } from "../../src/router/placement.js";
import type { TimingModel } from "../../src/timing/timingModel.js";
import { Prng } from "../../src/util/prng.js";
import type { WorkerRole } from "../../src/util/workerRole.js";
import { role } from "../helpers/specs.js";

const BLOCK = 4;

/** A policy without `kvRouting` (round robin) takes none of its calls: the cluster skips them. */
const UNTRACKED: KvRouting = {
  onDispatched() {},
  onPrefillCompleted() {},
  onFreed() {},
  onBlockStored() {},
  onBlockRemoved() {},
  wantsPrefillPrediction: false,
  wantsKvEvents: false,
  setCostParameters() {},
};

/** The tracking calls of `p`, as the cluster makes them. */
function hooks(p: Placement): KvRouting {
  return p.kvRouting ?? UNTRACKED;
}

/** Never asked for a pass here; the replay asks it for the predicted prefill of `aic` routers. */
const TIMING: TimingModel = {
  prefillMs: (_batch, isl, prefix) => 0.01 * (isl - prefix) + 1,
  decodeMs: () => 1,
  passMs: () => 1,
};
const OBSERVER = { onAdmit(): void {} };

const kv = (over: Partial<Extract<RouterSpec, { policy: "kv_router" }>> = {}): RouterSpec => ({
  policy: "kv_router",
  overlapScoreCredit: 1,
  prefillLoadScale: 1,
  temperature: 0,
  prefillLoadModel: "none",
  ...over,
});

interface Impl {
  readonly name: string;
  readonly router: RouterSpec;
  readonly role: WorkerRole;
  /** Lowest cost / rotation: identical requests over equal idle slots take one slot each. */
  readonly deterministicSpread: boolean;
}

const IMPLS: readonly Impl[] = [
  { name: "round robin", router: { policy: "round_robin" }, role: "aggregated", deterministicSpread: true },
  { name: "kv router, aggregated", router: kv(), role: "aggregated", deterministicSpread: true },
  { name: "kv router, prefill", router: kv(), role: "prefill", deterministicSpread: true },
  { name: "kv router, decode", router: kv(), role: "decode", deterministicSpread: true },
  {
    name: "kv router, aggregated, aic + softmax",
    router: kv({ prefillLoadModel: "aic", temperature: 0.7, overlapScoreCredit: 0.5 }),
    role: "aggregated",
    deterministicSpread: false,
  },
  {
    name: "kv router, prefill, aic",
    router: kv({ prefillLoadModel: "aic", prefillLoadScale: 2 }),
    role: "prefill",
    deterministicSpread: true,
  },
  {
    name: "kv router, decode, softmax (its preset overrides the aic spec)",
    router: kv({ prefillLoadModel: "aic", temperature: 0.3 }),
    role: "decode",
    deterministicSpread: false,
  },
];

const CASES = IMPLS.flatMap((impl) => [1, 2].map((ranks) => ({ ...impl, ranks })));

/** A pool built as the replay builds it, with `replicas` ready workers. */
function makePool(c: { router: RouterSpec; role: WorkerRole; ranks: number }, replicas: number): WorkerPool {
  const spec = role({ replicas, attentionData: c.ranks, blockSize: BLOCK, numGpuBlocks: 16 });
  return new WorkerPool(0, c.role, spec, TIMING, c.router, OBSERVER);
}

/** What the replay does around `choose`: the overlap read, then the dispatch to the chosen slot. */
function dispatch(
  p: Placement,
  req: number,
  hashes: Float64Array,
  offset: number,
  count: number,
  isl: number,
  now: number,
): number {
  const slot = p.choose(hashes, offset, count, isl, now);
  const overlapTokens = p.lastOverlapBlocks * BLOCK;
  const predicted = hooks(p).wantsPrefillPrediction
    ? TIMING.prefillMs(1, isl, Math.min(overlapTokens, isl))
    : Number.NaN;
  hooks(p).onDispatched(slot, req, hashes, offset, count, isl, now, predicted);
  return slot;
}

function expectReadySlot(pool: WorkerPool, slot: number): void {
  expect(Number.isInteger(slot)).toBe(true);
  expect(slot).toBeGreaterThanOrEqual(0);
  const w = pool.workerOf(slot);
  expect(w).toBeLessThan(pool.workerCount);
  expect(pool.state[w]).toBe(WorkerState.Ready);
}

interface Live {
  readonly req: number;
  readonly slot: number;
  readonly offset: number;
  readonly count: number;
  prefilled: boolean;
}

/** One choice as a trace entry: slot and overlap. */
type Trace = [number, number][];

/**
 * A seeded random history of arrivals, prefill completions, frees, KV stores and evictions, worker
 * starts, readiness, cancellations, drains and removals, and cost patches, checking properties 1, 2
 * and 6 at every step. `copyBlocks` passes each request's blocks in a fresh padded buffer.
 */
function runHistory(
  c: { router: RouterSpec; role: WorkerRole; ranks: number },
  seed: number,
  steps: number,
  copyBlocks: boolean,
): { trace: Trace; table: Float64Array; tableBefore: Float64Array } {
  const rng = new Prng(seed);
  const pool = makePool(c, 3);
  const p = pool.placement;
  const wantsKv = hooks(p).wantsKvEvents;
  const wantsPrediction = hooks(p).wantsPrefillPrediction;
  // Shared block-hash table as the replay's RequestTable: prompts of a few prefix families.
  const table = new Float64Array(steps * 8);
  let tableLen = 0;
  let nextUnique = 1_000_000;
  const stored = new Map<number, Set<number>>();
  const storedOf = (slot: number): Set<number> => {
    let s = stored.get(slot);
    if (s === undefined) {
      s = new Set();
      stored.set(slot, s);
    }
    return s;
  };
  const live: Live[] = [];
  const trace: Trace = [];
  let now = 0;
  let req = 0;
  const pick = <T>(xs: readonly T[]): T => xs[rng.nextIntInclusive(0, xs.length - 1)];
  const liveOn = (w: number) => live.filter((l) => pool.workerOf(l.slot) === w).length;

  for (let step = 0; step < steps; step++) {
    now += rng.nextIntInclusive(0, 3) * 0.5;
    const op = rng.nextFloat();
    if (op < 0.45) {
      // An arrival (or a hand-off to route).
      const family = rng.nextIntInclusive(0, 3);
      const shared = rng.nextIntInclusive(0, 4);
      const own = rng.nextIntInclusive(0, 2);
      const offset = tableLen;
      for (let i = 0; i < shared; i++) table[tableLen++] = family * 1000 + i;
      for (let i = 0; i < own; i++) table[tableLen++] = nextUnique++;
      const count = shared + own;
      const isl = count * BLOCK + rng.nextIntInclusive(0, BLOCK - 1);
      let hashes = table;
      let off = offset;
      const pad = rng.nextIntInclusive(0, 3); // drawn either way: the same history
      if (copyBlocks) {
        hashes = new Float64Array(pad + count + 2);
        // Padding that would change an overlap if read: a cached family's leading blocks.
        hashes.fill(family * 1000);
        hashes.set(table.subarray(offset, offset + count), pad);
        off = pad;
      }
      if (pool.readyCount === 0) {
        expect(() => p.choose(hashes, off, count, isl, now)).toThrow();
        trace.push([-1, 0]);
        continue;
      }
      const slot = p.choose(hashes, off, count, isl, now);
      const overlap = p.lastOverlapBlocks;
      expectReadySlot(pool, slot);
      expect(pool.rankOf(slot)).toBeLessThan(c.ranks);
      expect(Number.isInteger(overlap)).toBe(true);
      expect(overlap).toBeGreaterThanOrEqual(0);
      expect(overlap).toBeLessThanOrEqual(count);
      if (!wantsKv) expect(overlap).toBe(0);
      let told = 0;
      const held = storedOf(slot);
      while (told < count && held.has(table[offset + told])) told++;
      expect(overlap).toBeLessThanOrEqual(told);
      trace.push([slot, overlap]);
      if (rng.nextFloat() < 0.1) continue; // rejected before dispatch (prompt can never fit)
      const predicted = wantsPrediction
        ? TIMING.prefillMs(1, isl, Math.min(overlap * BLOCK, isl))
        : Number.NaN;
      hooks(p).onDispatched(slot, req, hashes, off, count, isl, now, predicted);
      live.push({ req, slot, offset, count, prefilled: false });
      req++;
    } else if (op < 0.6 && live.length > 0) {
      // First token / prefill done: the engine has stored the prompt's blocks.
      const l = pick(live);
      hooks(p).onPrefillCompleted(l.slot, l.req, now);
      if (rng.nextFloat() < 0.2) hooks(p).onPrefillCompleted(l.slot, l.req, now); // token after PrefillDone
      l.prefilled = true;
      if (wantsKv) {
        for (let i = 0; i < l.count; i++) {
          hooks(p).onBlockStored(l.slot, table[l.offset + i]);
          storedOf(l.slot).add(table[l.offset + i]);
        }
      }
    } else if (op < 0.72 && live.length > 0) {
      // Completed, rejected or abandoned: freed, with or without its prefill completion.
      const i = rng.nextIntInclusive(0, live.length - 1);
      const l = live[i];
      hooks(p).onFreed(l.slot, l.req, now);
      if (rng.nextFloat() < 0.1) hooks(p).onFreed(l.slot, l.req, now);
      live.splice(i, 1);
    } else if (op < 0.8) {
      // An eviction on a provisioned worker's engine.
      const slots = [...stored.keys()].filter((s) => pool.isProvisioned(pool.workerOf(s)));
      if (wantsKv && slots.length > 0) {
        const slot = pick(slots);
        const held = [...storedOf(slot)];
        if (held.length > 0) {
          const h = pick(held);
          hooks(p).onBlockRemoved(slot, h);
          storedOf(slot).delete(h);
        }
      }
    } else if (op < 0.85) {
      pool.addWorker(false, now);
    } else if (op < 0.9) {
      const starting = pool.idsIn(WorkerState.Starting);
      if (starting.length > 0) pool.markReady(pick(starting), 0);
    } else if (op < 0.92) {
      const starting = pool.idsIn(WorkerState.Starting);
      if (starting.length > 0) pool.cancelStarting(pick(starting), now);
    } else if (op < 0.96) {
      const ready = pool.idsIn(WorkerState.Ready);
      if (ready.length > 0) pool.drain(pick(ready));
    } else if (op < 0.98) {
      // A draining worker whose requests are all freed is removed.
      for (const w of pool.idsIn(WorkerState.Draining)) if (liveOn(w) === 0) pool.remove(w, now);
    } else {
      hooks(p).setCostParameters({
        overlapScoreCredit: rng.nextIntInclusive(0, 4) / 4,
        prefillLoadScale: rng.nextIntInclusive(0, 8) / 4,
        temperature: rng.nextIntInclusive(0, 2) / 4,
      });
    }
  }
  // Whatever is left still takes its lifecycle calls, on any worker state.
  for (const l of live) {
    if (!l.prefilled) hooks(p).onPrefillCompleted(l.slot, l.req, now);
    hooks(p).onFreed(l.slot, l.req, now);
  }
  return { trace, table: table.subarray(0, tableLen), tableBefore: table.slice(0, tableLen) };
}

describe.each(CASES)("Placement conformance: $name, $ranks rank(s) per worker", (c) => {
  it("has its tracking capability or none, the same for the whole run; the pool reads it once", () => {
    const pool = makePool(c, 2);
    const p = pool.placement;
    const routing = p.kvRouting;
    expect(routing === null).toBe(c.router.policy === "round_robin");
    expect(pool.kvRouting).toBe(routing);
    dispatch(p, 0, Float64Array.of(1, 2), 0, 2, 2 * BLOCK, 0);
    pool.drain(0);
    pool.addWorker(true, 1);
    expect(p.kvRouting).toBe(routing);
  });

  it("keeps its flags for the whole run", () => {
    const pool = makePool(c, 2);
    const p = pool.placement;
    const flags = [hooks(p).wantsKvEvents, hooks(p).wantsPrefillPrediction];
    expect(flags.map((f) => typeof f)).toEqual(["boolean", "boolean"]);
    dispatch(p, 0, Float64Array.of(1, 2), 0, 2, 2 * BLOCK, 0);
    pool.drain(0);
    pool.addWorker(true, 1);
    hooks(p).setCostParameters({ overlapScoreCredit: 0.5, prefillLoadScale: 2, temperature: 0 });
    expect([hooks(p).wantsKvEvents, hooks(p).wantsPrefillPrediction]).toEqual(flags);
  });

  it("throws rather than return a slot when no worker is ready (none, starting only, all drained)", () => {
    const pool = makePool(c, 0);
    const p = pool.placement;
    const hashes = Float64Array.of(5, 6);
    expect(() => p.choose(hashes, 0, 2, 2 * BLOCK, 0)).toThrow();
    pool.addWorker(false, 0);
    expect(() => p.choose(hashes, 0, 2, 2 * BLOCK, 0)).toThrow();
    pool.markReady(0, 0);
    expect(pool.workerOf(dispatch(p, 0, hashes, 0, 2, 2 * BLOCK, 1))).toBe(0);
    pool.drain(0);
    expect(() => p.choose(hashes, 0, 2, 2 * BLOCK, 2)).toThrow();
    pool.addWorker(false, 3);
    pool.cancelStarting(1, 3);
    expect(() => p.choose(hashes, 0, 2, 2 * BLOCK, 3)).toThrow();
  });

  it("only chooses ready workers' slots and reports a bounded overlap over a random history", () => {
    const traces = [1, 2, 3].map((seed) => runHistory(c, seed, 250, false).trace);
    // The histories have teeth: choices with no ready worker, and (where KV events count) cache hits.
    expect(traces.some((t) => t.some(([slot]) => slot < 0))).toBe(true);
    const hits = traces.some((t) => t.some(([, overlap]) => overlap > 0));
    expect(hits).toBe(c.router.policy === "kv_router" && c.role !== "decode");
  });

  it("is deterministic: same calls, same choices, whatever buffer holds the prompt blocks", () => {
    const a = runHistory(c, 7, 250, false);
    const b = runHistory(c, 7, 250, true);
    expect(b.trace).toEqual(a.trace);
    expect(runHistory(c, 7, 250, false).trace).toEqual(a.trace);
    expect(a.trace.filter(([slot]) => slot >= 0).length).toBeGreaterThan(60);
    // `choose` and `onDispatched` read the caller's table without writing it.
    expect(a.table).toEqual(a.tableBefore);
  });

  it(
    c.deterministicSpread
      ? "spreads identical requests over equal idle slots, one each, before doubling up"
      : "sampled choice: identical requests over equal idle slots reach every slot",
    () => {
      const workers = 3;
      const pool = makePool(c, workers);
      const hashes = Float64Array.of(11, 12, 13);
      const slots = new Set<number>();
      // A deterministic policy fills each slot once; a sampled one (softmax) only has to reach them all.
      const sends = c.deterministicSpread ? workers * c.ranks : 20 * workers * c.ranks;
      for (let r = 0; r < sends; r++) slots.add(dispatch(pool.placement, r, hashes, 0, 3, 3 * BLOCK, 0));
      expect(slots.size).toBe(workers * c.ranks);
    },
  );

  it("takes a joining worker, drops a draining one, and keeps going as ids grow", () => {
    const pool = makePool(c, 2);
    const p = pool.placement;
    const hashes = Float64Array.of(21, 22);
    const isl = 2 * BLOCK;
    let req = 0;
    const inFlight: [req: number, slot: number][] = [];
    const send = (now: number): number => {
      const slot = dispatch(p, req, hashes, 0, 2, isl, now);
      expectReadySlot(pool, slot);
      inFlight.push([req++, slot]);
      return slot;
    };
    for (let i = 0; i < 2 * c.ranks; i++) send(0);
    // Starting: not a candidate.
    expect(pool.addWorker(false, 1)).toBe(2);
    for (let i = 0; i < 2 * c.ranks; i++) expect(pool.workerOf(send(1))).not.toBe(2);
    // Ready: chosen within one slot count of dispatches (RR: its turn; KV: it is the idle one).
    pool.markReady(2, 0);
    const seen = new Set<number>();
    for (let i = 0; i < 3 * c.ranks; i++) seen.add(send(2));
    if (c.deterministicSpread) for (let r = 0; r < c.ranks; r++) expect(seen).toContain(2 * c.ranks + r);
    // Draining: never chosen again; its in-flight requests still complete and free.
    pool.drain(0);
    for (let i = 0; i < 6 * c.ranks; i++) expect(pool.workerOf(send(3))).not.toBe(0);
    const drained = inFlight.filter(([, slot]) => pool.workerOf(slot) === 0);
    expect(drained.length).toBeGreaterThan(0);
    for (const [r, slot] of drained) {
      hooks(p).onPrefillCompleted(slot, r, 4);
      hooks(p).onFreed(slot, r, 4);
    }
    pool.remove(0, 4);
    // A later worker gets the next id and takes requests; the removed one stays out.
    expect(pool.addWorker(true, 5)).toBe(3);
    const after = new Set<number>();
    for (let i = 0; i < 4 * c.ranks; i++) after.add(pool.workerOf(send(5)));
    expect(after.has(0)).toBe(false);
    if (c.deterministicSpread) expect(after.has(3)).toBe(true);
  });

  it("does not throw on lifecycle calls and KV events it ignores or does not know", () => {
    const pool = makePool(c, 2);
    const p = pool.placement;
    const hashes = Float64Array.of(31, 32, 33);
    // KV events on any slot, repeated and for unknown blocks, whether or not the policy wants them.
    for (let slot = 0; slot < 2 * c.ranks; slot++) {
      hooks(p).onBlockStored(slot, 31);
      hooks(p).onBlockStored(slot, 31);
      hooks(p).onBlockRemoved(slot, 99);
    }
    // Completion or free of a request it never saw.
    hooks(p).onPrefillCompleted(0, 12345, 0);
    hooks(p).onFreed(0, 12345, 0);
    // A choice never dispatched (the replay's rejected hand-off), then normal dispatches.
    const undispatched = p.choose(hashes, 0, 3, 3 * BLOCK, 0);
    expectReadySlot(pool, undispatched);
    const a = dispatch(p, 1, hashes, 0, 3, 3 * BLOCK, 1);
    const b = dispatch(p, 2, hashes, 0, 0, 3, 1);
    hooks(p).onFreed(a, 1, 2); // freed without a prefill completion
    hooks(p).onPrefillCompleted(b, 2, 2);
    hooks(p).onPrefillCompleted(b, 2, 2);
    hooks(p).onFreed(b, 2, 3);
    hooks(p).onFreed(b, 2, 3);
    // KV events from a draining worker's engine and from a removed one's stay harmless.
    pool.drain(0);
    hooks(p).onBlockStored(0, 32);
    hooks(p).onBlockRemoved(0, 31);
    pool.remove(0, 4);
    hooks(p).onBlockRemoved(0, 32);
    hooks(p).setCostParameters({ overlapScoreCredit: 0, prefillLoadScale: 0, temperature: 0 });
    expectReadySlot(pool, dispatch(p, 3, hashes, 0, 3, 3 * BLOCK, 5));
  });
});
