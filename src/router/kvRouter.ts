/**
 * KV-aware placement, after Dynamo's KV router as its offline replay uses it (`ai-dynamo/dynamo@a4bdb9b:lib/kv-router/src/scheduling/selector/default.rs`, `ai-dynamo/dynamo@cfa2254:lib/kv-router/src/protocols.rs`,
 * docs/routing.md). For a request with prompt blocks b_0 … b_{n−1} and `isl` prompt tokens, each
 * eligible worker w costs
 *
 *   prefillLoadScale · max(0, (activePrefillTokens(w) + isl)/blockSize − overlapScoreCredit · overlap(w))
 *     + activeBlocks(w) + newBlocks(w)
 *
 * where overlap(w) counts the leading prompt blocks w holds in its KV cache (as told by KV events),
 * the prefill term is 0 without `trackPrefillTokens`, and the decode term (unique live blocks plus the
 * request's blocks not already live there) is 0 without `trackActiveBlocks`. Temperature 0 takes the
 * lowest cost; ties and softmax sampling draw from a seeded PRNG, so a run is reproducible.
 *
 * Workers are small non-negative integer ids mapped to dense "slots", which index the bitsets of
 * the hash tables and the per-worker load; a slot is reused only once its worker has left the
 * eligible set and its last live request has been freed.
 */

import { Prng } from "../util/prng.js";
import { ActiveLoad } from "./activeLoad.js";
import { pickLowestCost, pickSoftmax } from "./costChoice.js";
import { HashSlotSets } from "./hashSlotSets.js";
import { type KvRouterInit, type KvRouterOptions, resolveKvRouterOptions } from "./kvRouterOptions.js";

export type { KvRouterInit, KvRouterOptions, PrefillLoadModel } from "./kvRouterOptions.js";
export { KV_ROUTER_DEFAULT_SEED, resolveKvRouterOptions } from "./kvRouterOptions.js";

const NO_SLOT = -1;

export class KvRouter {
  private opts: Readonly<KvRouterOptions>;
  private readonly prng: Prng;
  /** hash → slots whose KV cache holds the block; fed only by KV events. */
  private readonly cached = new HashSlotSets();
  private readonly load: ActiveLoad;

  private slotOfWorker = new Int32Array(64).fill(NO_SLOT);
  private readonly workerOfSlot: number[] = [];
  private readonly eligibleSlot: boolean[] = [];
  private readonly freeSlots: number[] = [];

  /** Eligible workers in id order, and their slots. */
  private candidateWorkers = new Int32Array(0);
  private candidateSlots = new Int32Array(0);
  private candidateCount = 0;

  // Scratch for select(), sized on topology changes only.
  private costs = new Float64Array(0);
  private probabilities = new Float64Array(0);
  private overlapBySlot = new Int32Array(0);
  private liveDepthBySlot = new Int32Array(0);
  private aliveWords = new Int32Array(1);
  private lastOverlap = 0;

  constructor(init: KvRouterInit) {
    this.opts = Object.freeze(resolveKvRouterOptions(init));
    this.prng = new Prng(this.opts.seed);
    this.load = new ActiveLoad(
      this.opts.trackActiveBlocks,
      this.opts.trackPrefillTokens,
      this.opts.assumeKvReuse,
    );
  }

  /** Makes `worker` eligible. Throws if it already is. A draining worker that returns keeps its live load. */
  get options(): Readonly<KvRouterOptions> {
    return this.opts;
  }

  /**
   * Changes the cost parameters from now on (the live router's PATCH /router_policy, which retune
   * uses). Tracked load and the prefix index are kept; only the scoring changes.
   */
  setCostParameters(
    p: Pick<KvRouterOptions, "overlapScoreCredit" | "prefillLoadScale" | "temperature">,
  ): void {
    this.opts = Object.freeze(resolveKvRouterOptions({ ...this.opts, ...p }));
  }

  addWorker(worker: number): void {
    if (!Number.isInteger(worker) || worker < 0) throw new RangeError(`kv router: bad worker id ${worker}`);
    if (this.eligibleSlotOf(worker) !== NO_SLOT) throw new Error(`kv router: worker ${worker} already added`);
    let slot = this.slotOf(worker);
    if (slot === NO_SLOT) slot = this.assignSlot(worker);
    this.eligibleSlot[slot] = true;
    this.rebuildCandidates();
  }

  /**
   * Drops `worker` from the candidates and forgets its cache-index entries (later KV events from it
   * are ignored). Its live requests may still be marked and freed. No-op for a non-eligible worker.
   */
  removeWorker(worker: number): void {
    const slot = this.eligibleSlotOf(worker);
    if (slot === NO_SLOT) return;
    this.eligibleSlot[slot] = false;
    this.cached.clearSlot(slot);
    if (this.load.liveRequests(slot) === 0) this.releaseSlot(slot);
    this.rebuildCandidates();
  }

  /** Eligible workers in id order (a copy). */
  workers(): number[] {
    return Array.from(this.candidateWorkers.subarray(0, this.candidateCount));
  }

  /** KV event: `worker` cached the block with this sequence hash (ignored for a non-eligible worker). */
  onBlockStored(worker: number, sequenceHash: number): void {
    if (!(sequenceHash >= 0)) throw new RangeError(`kv router: bad block hash ${sequenceHash}`);
    const slot = this.eligibleSlotOf(worker);
    if (slot !== NO_SLOT) this.cached.add(sequenceHash, slot);
  }

  /** KV event: `worker` evicted the block (no-op if the router did not know it). */
  onBlockRemoved(worker: number, sequenceHash: number): void {
    const slot = this.eligibleSlotOf(worker);
    if (slot !== NO_SLOT) this.cached.remove(sequenceHash, slot);
  }

  /**
   * Chooses a worker for a request whose full prompt blocks have the chained sequence hashes
   * `hashes[offset .. offset+count)` and whose prompt has `isl` tokens, at virtual time `nowMs`.
   * Returns the worker id, or -1 when no worker is eligible. Allocates nothing.
   */
  select(hashes: Float64Array, offset: number, count: number, isl: number, nowMs: number): number {
    const n = this.candidateCount;
    if (n === 0) {
      this.lastOverlap = 0;
      return -1;
    }
    this.scoreCandidates(hashes, offset, count, isl, nowMs);
    const pick =
      this.opts.temperature === 0
        ? pickLowestCost(this.costs, n, this.prng)
        : pickSoftmax(this.costs, n, this.opts.temperature, this.prng, this.probabilities);
    this.lastOverlap = this.overlapBySlot[this.candidateSlots[pick]];
    return this.candidateWorkers[pick];
  }

  /** Cached leading blocks of the chosen worker in the last select() (0 if it returned -1). */
  lastOverlapBlocks(): number {
    return this.lastOverlap;
  }

  /** Cost the last select() gave `worker`; NaN if it was not a candidate (valid until the worker set changes). */
  lastCost(worker: number): number {
    for (let i = 0; i < this.candidateCount; i++)
      if (this.candidateWorkers[i] === worker) return this.costs[i];
    return Number.NaN;
  }

  /**
   * Starts counting a request routed to `worker` (must be eligible; the id must not be live).
   * Its prefill load is its uncached prompt tokens, `isl − min(isl, overlap(worker)·blockSize)` with the
   * overlap read from the index now, as the reference derives them from the selection's cached tokens;
   * a fully cached prompt adds no prefill load. `predictedPrefillMs` (used only with `prefillLoadModel:
   * "aic"`; NaN = no prediction) should be the timing model's prefill time for those uncached tokens
   * after the cached prefix, i.e. `predict(1, isl − cached, cached)` with `cached = lastOverlapBlocks()·blockSize`.
   * The hashes are copied when needed; the caller may reuse its buffer.
   */
  addRequest(
    worker: number,
    request: number,
    hashes: Float64Array,
    offset: number,
    count: number,
    isl: number,
    nowMs: number,
    predictedPrefillMs: number,
  ): void {
    const slot = this.eligibleSlotOf(worker);
    if (slot === NO_SLOT) throw new Error(`kv router: addRequest on non-eligible worker ${worker}`);
    const aic = this.opts.prefillLoadModel === "aic";
    if (
      aic &&
      !Number.isNaN(predictedPrefillMs) &&
      !(predictedPrefillMs >= 0 && predictedPrefillMs < Infinity)
    ) {
      throw new RangeError(
        `kv router: predicted prefill must be finite and ≥ 0 or NaN, got ${predictedPrefillMs}`,
      );
    }
    const cachedTokens = Math.min(isl, this.cachedDepth(slot, hashes, offset, count) * this.opts.blockSize);
    this.load.add(
      slot,
      request,
      hashes,
      offset,
      count,
      isl - cachedTokens,
      aic ? predictedPrefillMs : Number.NaN,
      nowMs,
    );
  }

  /**
   * The request's first token arrived: its prompt tokens stop counting as active prefill.
   * Returns false (and does nothing) for an unknown request, as the reference; throws if it lives on another worker.
   */
  markPrefillCompleted(worker: number, request: number, nowMs: number): boolean {
    this.checkOwner(worker, request);
    return this.load.markPrefillCompleted(request, nowMs) !== NO_SLOT;
  }

  /**
   * The request finished: its blocks (and any prefill load left) stop counting.
   * Returns false (and does nothing) for an unknown request, as the reference; throws if it lives on another worker.
   */
  free(worker: number, request: number, nowMs: number): boolean {
    this.checkOwner(worker, request);
    const slot = this.load.free(request, nowMs);
    if (slot === NO_SLOT) return false;
    if (!this.eligibleSlot[slot] && this.load.liveRequests(slot) === 0) this.releaseSlot(slot);
    return true;
  }

  /** Active prefill tokens of `worker` at `nowMs`, after AIC decay (0 for an unknown worker). */
  activePrefillTokens(worker: number, nowMs: number): number {
    const slot = this.slotOf(worker);
    return slot === NO_SLOT ? 0 : this.load.activePrefillTokens(slot, nowMs);
  }

  /** Unique decode blocks live on `worker` (0 for an unknown worker). */
  activeBlocks(worker: number): number {
    const slot = this.slotOf(worker);
    return slot === NO_SLOT ? 0 : this.load.activeBlocks(slot);
  }

  /** Cached leading blocks of the prompt on `worker`, per the router's index (0 for a non-eligible worker). */
  overlapBlocks(worker: number, hashes: Float64Array, offset: number, count: number): number {
    const slot = this.eligibleSlotOf(worker);
    return slot === NO_SLOT ? 0 : this.cachedDepth(slot, hashes, offset, count);
  }

  /** Distinct block hashes held by at least one eligible worker. */
  indexedBlocks(): number {
    return this.cached.size;
  }

  private scoreCandidates(
    hashes: Float64Array,
    offset: number,
    count: number,
    isl: number,
    nowMs: number,
  ): void {
    const o = this.opts;
    const n = this.candidateCount;
    const slots = this.candidateSlots;
    this.cached.leadingDepths(hashes, offset, count, slots, n, this.overlapBySlot, this.aliveWords);
    const live = this.load.livePresence;
    if (live !== null)
      live.leadingDepths(hashes, offset, count, slots, n, this.liveDepthBySlot, this.aliveWords);
    for (let i = 0; i < n; i++) {
      const slot = slots[i];
      let cost = 0;
      if (o.trackPrefillTokens) {
        const rawBlocks = (this.load.activePrefillTokens(slot, nowMs) + isl) / o.blockSize;
        cost = o.prefillLoadScale * Math.max(0, rawBlocks - o.overlapScoreCredit * this.overlapBySlot[slot]);
      }
      if (o.trackActiveBlocks) {
        const newBlocks = live !== null ? count - this.liveDepthBySlot[slot] : count;
        cost += this.load.activeBlocks(slot) + newBlocks;
      }
      this.costs[i] = cost;
    }
  }

  /** Leading blocks of the prompt that `slot` holds in its KV cache. */
  private cachedDepth(slot: number, hashes: Float64Array, offset: number, count: number): number {
    let depth = 0;
    while (depth < count && this.cached.has(hashes[offset + depth], slot)) depth++;
    return depth;
  }

  private checkOwner(worker: number, request: number): void {
    const slot = this.load.slotOf(request);
    if (slot !== NO_SLOT && this.workerOfSlot[slot] !== worker) {
      throw new Error(
        `kv router: request ${request} lives on worker ${this.workerOfSlot[slot]}, not ${worker}`,
      );
    }
  }

  private slotOf(worker: number): number {
    return worker >= 0 && worker < this.slotOfWorker.length ? this.slotOfWorker[worker] : NO_SLOT;
  }

  private eligibleSlotOf(worker: number): number {
    const slot = this.slotOf(worker);
    return slot !== NO_SLOT && this.eligibleSlot[slot] ? slot : NO_SLOT;
  }

  private assignSlot(worker: number): number {
    if (worker >= this.slotOfWorker.length) {
      let size = this.slotOfWorker.length;
      while (size <= worker) size *= 2;
      const grown = new Int32Array(size).fill(NO_SLOT);
      grown.set(this.slotOfWorker);
      this.slotOfWorker = grown;
    }
    // Lowest free slot keeps the bitsets narrow.
    let slot: number;
    if (this.freeSlots.length > 0) {
      this.freeSlots.sort((a, b) => b - a);
      slot = this.freeSlots.pop()!;
      this.load.resetSlot(slot);
    } else {
      slot = this.workerOfSlot.length;
      this.workerOfSlot.push(worker);
      this.eligibleSlot.push(false);
    }
    this.workerOfSlot[slot] = worker;
    this.slotOfWorker[worker] = slot;
    const slotCount = this.workerOfSlot.length;
    this.cached.ensureSlotCapacity(slotCount);
    this.load.ensureSlots(slotCount);
    if (this.overlapBySlot.length < slotCount) {
      this.overlapBySlot = new Int32Array(slotCount);
      this.liveDepthBySlot = new Int32Array(slotCount);
      this.aliveWords = new Int32Array(Math.ceil(slotCount / 32));
    }
    return slot;
  }

  private releaseSlot(slot: number): void {
    this.slotOfWorker[this.workerOfSlot[slot]] = NO_SLOT;
    this.workerOfSlot[slot] = NO_SLOT;
    this.freeSlots.push(slot);
  }

  private rebuildCandidates(): void {
    const workers: number[] = [];
    for (let s = 0; s < this.workerOfSlot.length; s++)
      if (this.eligibleSlot[s]) workers.push(this.workerOfSlot[s]);
    workers.sort((a, b) => a - b);
    this.candidateCount = workers.length;
    this.candidateWorkers = Int32Array.from(workers);
    this.candidateSlots = Int32Array.from(workers, (w) => this.slotOfWorker[w]);
    if (this.costs.length < workers.length) {
      this.costs = new Float64Array(workers.length);
      this.probabilities = new Float64Array(workers.length);
    }
  }
}
