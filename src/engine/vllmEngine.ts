import { PassShape } from "../timing/passShape.js";
import { decodeRunMs, type TimingModel } from "../timing/timingModel.js";
import { SEQUENCE_HASH_SEED } from "../util/blockHash.js";
import { mixBlockHash } from "../util/blockHashTable.js";
import { takeEntry } from "../util/mapTake.js";
import { outputBlockHash } from "../util/outputBlockHash.js";
import { BlockBoundaries } from "./blockBoundaries.js";
import { blocksToCompletion, clampOutputToCache, toCompletionBlocks } from "./capacityPolicy.js";
import type { EngineConfig, EngineHostOffload } from "./engineConfig.js";
import { KvBlockPool } from "./kvBlockPool.js";
import { pricePass } from "./passPricing.js";
import { PassSignals, signalCapacity } from "./passSignals.js";
import { PassStats } from "./passStats.js";
import { BlockArrays, type Sequence } from "./sequence.js";
import { SequenceQueue } from "./sequenceQueue.js";
import { Signal } from "./signal.js";
import { BurstSampler } from "./speculation.js";
import type { AdmissionObserver, PlainPassSink, RunWindow, WorkerEngine } from "./workerEngine.js";

/**
 * Blocks per prefix-cache index group: a Mooncake hash id's 512 tokens are 8 engine blocks of 64
 * (engine/blockIndex.ts "Grouped homes").
 */
const INDEX_GROUP = 8;
/** The most pass durations a decode run prices in one call (`runPlainDecodes`). */
const RUN_PRICE_CHUNK = 64;

/**
 * vLLM-v1-like continuous-batching engine (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`, `ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`).
 *
 * `startPass(now)` executes one forward pass eagerly: it schedules running requests first, then
 * admits waiting ones (strict FIFO), mutates KV and sequence state to the post-pass state, and
 * returns the pass duration. The tokens and terminal signals it produced are left in
 * `signalReq`/`signalKind[0 .. signalCount)` for the caller to take (`takeSignals`) and deliver
 * at `now + duration`.
 */
export class VllmEngine extends PassSignals implements WorkerEngine {
  readonly pool: KvBlockPool;
  private readonly waiting = new SequenceQueue();
  /** Decode role: hand-offs whose KV arrived, waiting for admission (FIFO). */
  private readonly remoteReady = new SequenceQueue();
  private running: Sequence[] = [];
  /** Preemptions over the engine's life. */
  preemptions = 0;
  /** Prefill role: requests whose KV is held until their transfer completes, by request row. */
  private readonly held = new Map<number, Sequence>();
  /** Decode role: blocks reserved for hand-offs whose KV has not arrived yet. */
  private reserved = 0;
  /** Host offload: admitted requests whose prefix is being loaded from the host tier, by row. */
  private readonly loading = new Map<number, Sequence>();
  /** Host offload: loads that landed, waiting for a slot in the batch (FIFO). */
  private readonly loadedReady = new SequenceQueue();
  private readonly host: EngineHostOffload | null;
  /** The disk blocks of the last `offloadHits` run. */
  private runDiskBlocks = 0;
  /** Whether the last pass changed anything (scheduled tokens, signalled, or preempted). */
  lastPassProgressed = false;
  /** Forward-pass metrics of the latest pass (what the Planner observes). */
  readonly stats = new PassStats();
  /** The shape of the pass being priced, refilled for every pass. */
  private readonly passShape = new PassShape();
  /** Σ length and Σ length² of the requests in `waiting` (kept incrementally: queues can be long). */
  private waitingTokens = 0;
  private waitingTokensSq = 0;
  // Prefill batch statistics of the pass being formed (`ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`).
  private prefillCount = 0;
  /**
   * Welford mean and M2 of the prompt lengths of the pass's prefill requests: the reference's
   * `var_prefill_length` is the population variance of each scheduled prefill's whole prompt
   * (`compute_fpm`'s `prompt_len`, `ai-dynamo/aisimulate@03e8867:crates/core/src/engine/scheduler/vllm/core.rs`),
   * accumulated as its `WelfordAcc` does (`ai-dynamo/aisimulate@2262f3f:crates/core/src/engine/scheduler/mod.rs`).
   */
  private prefillLengthMean = 0;
  private prefillLengthM2 = 0;
  private prefillIslSum = 0;
  private prefillPrefixSum = 0;
  /** Whether the pass being formed preempted, and the drafts its sequences verify (count, tokens). */
  private preemptedInPass = false;
  private draftSequences = 0;
  /** The decode half as the pass is priced: `stats`' decode batch less, with `firstTokenAtPrefill`, the requests that prefilled in it. */
  private pricedDecodeRequests = 0;
  private pricedDecodeKv = 0;
  private draftTokens = 0;
  /** Passes started so far, and when the latest one ends (async scheduling's visibility rule). */
  private passSerial = 0;
  /** The rows of a run's batch (`runPlainDecodes`): room for the largest batch (grown if ever short). */
  private runRows: Int32Array;
  /** A run's pass durations priced ahead (`runPlainDecodes`). */
  private readonly runPassMs = new Float64Array(RUN_PRICE_CHUNK);
  /** When each pass of a run ends (`runPlainDecodes`), grown to the longest run. */
  private runEnds = new Float64Array(256);
  /** Block arrays of requests that let their blocks go, for later requests (`Sequence.blocks`). */
  private readonly blockArrays = new BlockArrays();
  /** The blocks of the cached prefix found for an admission (`findCachedPrefix`). */
  private hitBlocks = new Int32Array(256);
  /** A block hash handed to the pool (`KvBlockPool.registerAt`, `lookupAt`): a double argument is garbage. */
  private readonly key = new Float64Array(1);
  /** Where a run's requests cross block boundaries (`runPlainDecodes`). */
  private readonly boundaries = new BlockBoundaries();
  /** Speculative decoding: draft tokens per sequence per pass (0 = off) and the acceptance draws. */
  private readonly draftLimit: number;
  private readonly sampler: BurstSampler | null;
  /** TRT-LLM `GUARANTEED_NO_EVICT`: admit only what fits to completion; never preempt. */
  private readonly noEvict: boolean;

  constructor(
    private readonly config: EngineConfig,
    private readonly timing: TimingModel,
    private readonly observer: AdmissionObserver,
  ) {
    // Sized for the largest batch: a growth first met late in a run deoptimized the pass code.
    super(signalCapacity(config.maxSequences));
    this.runRows = new Int32Array(Math.max(64, config.maxSequences));
    this.pool = new KvBlockPool(config.numGpuBlocks);
    this.host = config.hostOffload ?? null;
    const spec = config.role === "prefill" ? null : (config.speculation ?? null);
    this.draftLimit = spec === null ? 0 : spec.numSpeculativeTokens;
    this.sampler = spec === null ? null : new BurstSampler(spec);
    this.noEvict = config.capacityPolicy === "guaranteed_no_evict";
  }

  get waitingCount(): number {
    return this.waiting.length + this.remoteReady.length + this.loading.size + this.loadedReady.length;
  }

  get runningCount(): number {
    return this.running.length;
  }

  /** Requests this worker holds (waiting or running). */
  get inFlight(): number {
    return (
      this.waiting.length +
      this.remoteReady.length +
      this.running.length +
      this.loading.size +
      this.loadedReady.length
    );
  }

  /** Whether a pass has something to do (a request whose host load is in flight waits for it). */
  hasWork(): boolean {
    // Every queue's length is read on every call (lengths are ≥ 0: their bitwise or is 0 only when
    // all are): with `||`, the later ones were first read when a worker ran dry, late in a run,
    // and deoptimized the replay's worker loop (docs/performance.md "Deoptimizations").
    return (
      (this.waiting.length | this.running.length | this.remoteReady.length | this.loadedReady.length) !== 0
    );
  }

  /** Whether the engine holds nothing: no queued, running, loading, held or reserved request. */
  isIdle(): boolean {
    return !this.hasWork() && this.held.size === 0 && this.reserved === 0 && this.loading.size === 0;
  }

  enqueue(seq: Sequence): void {
    this.completeHashesPastOwnerOnly(seq);
    if (this.noEvict) {
      const cfg = this.config;
      seq.maxOutput = clampOutputToCache(seq.maxOutput, seq.promptLength, cfg.numGpuBlocks, cfg.blockSize);
    }
    seq.queuedAfterPass = this.passSerial;
    this.pushWaiting(seq, false);
  }

  /**
   * Whether the next pass may admit waiting requests (the cluster closes it between the passes of
   * `prefill_schedule_interval`); running requests, hand-offs and loaded prefixes are unaffected.
   */
  admitsWaiting = true;

  /** Executes one pass starting at `now`; returns its duration in ms. */
  startPass(now: number): number {
    const cfg = this.config;
    this.pendingSignals = 0;
    const stats = this.stats;
    this.beginPassStats(stats);
    stats.reset();
    this.preemptedInPass = false;
    this.draftSequences = 0;
    this.draftTokens = 0;
    this.prefillCount = 0;
    this.prefillLengthMean = 0;
    this.prefillLengthM2 = 0;
    this.prefillIslSum = 0;
    this.prefillPrefixSum = 0;
    // Async scheduling: this pass was scheduled when the previous one started, so it only sees
    // requests queued before that (serial < previous). An idle gap or an empty batch means the
    // scheduler ran just now and sees everything.
    const previousSerial = this.passSerial++;
    // A store this pass makes may evict a host block to disk: its write starts now.
    if (this.host !== null) this.host.tier.nowMs = now;
    const backToBack = cfg.asyncScheduling === true && now === this.lastPassEndMs && this.running.length > 0;
    const visibleBelow = backToBack ? previousSerial : Number.POSITIVE_INFINITY;

    // 1. Running requests first, in queue order.
    let budget = this.scheduleRunning(cfg.maxBatchedTokens);

    // 2. Waiting admissions: strict FIFO, none in a pass that preempted. Hand-offs whose KV has
    //    arrived go first: their blocks are already held, so queueing them behind a request that
    //    does not fit would only keep that KV idle (and could deadlock a small cache).
    if (!this.preemptedInPass) budget = this.admit(now, budget, visibleBelow);
    this.recordQueued(stats);

    // 3. Emit: every request whose known tokens are all computed produces one token at pass end.
    this.emitTokens(stats);
    this.rejectOutgrownHead(budget);

    this.lastPassProgressed =
      this.preemptedInPass || budget < cfg.maxBatchedTokens || this.pendingSignals > 0;
    stats.numPrefillRequests = this.prefillCount;
    stats.varPrefillLength = this.prefillCount > 0 ? this.prefillLengthM2 / this.prefillCount : 0;
    stats.sumPrefillKvTokens = this.prefillPrefixSum;
    return this.endPass(now, this.passDurationMs(), stats);
  }

  /**
   * Step 1 of a pass: each running request, in queue order, computes what it has left (a prefill
   * chunk, its decode token, or a verify pass with drafts) within the token budget, taking the KV
   * it needs. Returns the budget left.
   */
  private scheduleRunning(budget: number): number {
    const bs = this.config.blockSize;
    const running = this.running;
    let i = 0;
    while (i < running.length && budget > 0) {
      const s = running[i];
      const remaining = s.length - s.numComputed;
      if (remaining <= 0) {
        i++;
        continue;
      }
      let desired = Math.min(remaining, budget);
      // Speculative decoding: a decoding sequence (its last token to compute, past its prefill)
      // verifies that token and up to K drafts, no more than its remaining output can use and the
      // token budget allows; their KV slots are allocated with it.
      const drafts =
        this.draftLimit > 0 && remaining === 1 && s.numComputed >= s.prefillTarget
          ? Math.min(this.draftLimit, s.maxOutput - s.generated - 1, budget - 1)
          : 0;
      if (drafts > 0) desired = 1 + drafts;
      // A decode token strictly inside its last block needs no block and fills none (the common
      // case: one check instead of ensureBlocks' division and compute's prefill and block tests).
      if (drafts === 0 && desired === 1 && s.numComputed >= s.prefillTarget) {
        const computed = s.numComputed + 1;
        const capacity = s.blocks.length * bs;
        if (computed < capacity && computed > capacity - bs) {
          s.numComputed = computed;
          budget--;
          i++;
          continue;
        }
      }
      if (!this.allocateOrPreempt(s, desired)) break;
      if (drafts > 0) {
        // The real token is computed now; accepted drafts become computed at emission.
        this.compute(s, 1);
        s.drafts = drafts;
        this.draftSequences++;
        this.draftTokens += drafts;
      } else {
        this.compute(s, desired);
      }
      budget -= desired;
      i++;
    }
    return budget;
  }

  /**
   * Allocates the blocks of the next `desired` tokens of running request `s`, preempting until
   * they fit; false when `s` itself was preempted.
   */
  private allocateOrPreempt(s: Sequence, desired: number): boolean {
    if (this.noEvict && !this.ensureBlocks(s, s.numComputed + desired)) {
      throw new Error("internal: a GUARANTEED_NO_EVICT request ran out of the KV reserved for it");
    }
    const running = this.running;
    while (!this.ensureBlocks(s, s.numComputed + desired)) {
      // LIFO: the newest running request gives its KV back and is recomputed later.
      const victim = running[running.length - 1];
      this.preempt();
      this.preemptedInPass = true;
      if (victim === s) return false;
    }
    return true;
  }

  /**
   * Step 2 of a pass: hand-offs whose KV arrived, then requests whose prefix loaded from the host
   * tier, then waiting requests join the batch while it has room. Returns the budget left.
   */
  private admit(now: number, budget: number, visibleBelow: number): number {
    const cfg = this.config;
    const running = this.running;
    while (running.length < cfg.maxSequences && budget > 0 && this.remoteReady.length > 0) {
      const s = this.remoteReady.popFront();
      s.admissions++;
      this.observer.onAdmit(s.req, now, s.residentTokens);
      running.push(s);
    }
    while (running.length < cfg.maxSequences && budget > 0 && this.loadedReady.length > 0) {
      const s = this.loadedReady.front();
      if (cfg.chunkedPrefill === false && s.length - s.numComputed > budget) break;
      const desired = Math.min(s.length - s.numComputed, budget);
      if (!this.ensureBlocks(s, s.numComputed + desired)) break;
      this.loadedReady.popFront();
      s.admissions++;
      this.observer.onAdmit(s.req, now, s.numComputed);
      this.compute(s, desired);
      budget -= desired;
      running.push(s);
    }
    return this.admitWaiting(now, budget, visibleBelow);
  }

  /**
   * Admits waiting requests in FIFO order, those queued before `visibleBelow`, until one does not
   * fit: its cached prefix reused, the rest of its prompt computed (chunked to the budget) or its
   * offloaded prefix loaded. Returns the budget left.
   */
  private admitWaiting(now: number, budget: number, visibleBelow: number): number {
    const cfg = this.config;
    const bs = cfg.blockSize;
    const running = this.running;
    // No-evict: the blocks running requests still need to complete are spoken for.
    let spokenFor = this.noEvict ? blocksToCompletion(running, bs) : 0;
    while (this.admitsWaiting && running.length < cfg.maxSequences && budget > 0 && this.waiting.length > 0) {
      const s = this.waiting.front();
      if (s.queuedAfterPass >= visibleBelow) break;
      const len = s.length;
      const knownBlocks = Math.ceil(len / bs);
      if (
        (cfg.maxModelLen !== null && s.promptLength >= cfg.maxModelLen) ||
        (s.admissions === 0 && knownBlocks > cfg.numGpuBlocks)
      ) {
        this.rejectWaitingHead(s);
        continue;
      }
      let cachedBlocks = 0;
      let activeCachedBlocks = 0;
      if (cfg.prefixCaching) {
        // vLLM recomputes at least the last token for logits: a fully cached context still
        // leaves its final block to compute.
        const maxCachedBlocks = Math.floor((len - 1) / bs);
        const knownHashes = s.promptFullBlocks + s.outputHashes.length;
        // From `ownerOnlyFrom` on, the request holds content no other request has, and its own
        // blocks there are indexed only once it leaves without completing (then the field is
        // +∞; engine/kvBlockPool.ts "Owner-only runs"): no lookup can hit there, so the search
        // stops. A synthetic prompt, owner-only from its first block, looks nothing up.
        const reachable = Math.min(maxCachedBlocks, knownHashes, this.ownerOnlyStart(s));
        cachedBlocks = this.findCachedPrefix(s, reachable);
        activeCachedBlocks = this.activeHits(cachedBlocks);
      }
      // Inactive cached hits are re-consumed from the free capacity; active ones are shared.
      // No-evict needs the whole completion to fit beside what the running ones will still take.
      const needed = (this.noEvict ? toCompletionBlocks(s, bs) : knownBlocks) - activeCachedBlocks;
      if (needed > this.pool.availableBlocks - spokenFor) break;
      if (cfg.chunkedPrefill === false) {
        // Without chunked prefill the whole rest of the prompt runs in this pass, or it waits.
        const rest = len - cachedBlocks * bs;
        if (rest > cfg.maxBatchedTokens) {
          this.rejectWaitingHead(s);
          continue;
        }
        if (rest > budget) break;
      }
      // The prefix goes on in host memory or on disk: load it instead of recomputing it.
      const loadBlocks =
        this.host === null || !cfg.prefixCaching ? 0 : this.offloadHits(s, cachedBlocks, len, now);
      this.popWaiting();
      // The hits found above: nothing ran in between that could change the cache.
      this.acquireHits(s, cachedBlocks);
      if (loadBlocks > 0) {
        this.startLoad(s, cachedBlocks, loadBlocks, now);
        continue;
      }
      budget -= this.startPrefill(s, cachedBlocks * bs, budget, now);
      running.push(s);
      if (this.noEvict) spokenFor += toCompletionBlocks(s, bs) - s.blocks.length;
    }
    return budget;
  }

  /**
   * Admits `s`, whose first `cachedTokens` are cached, and computes as much of the rest of its
   * prompt as `budget` allows; returns the tokens computed.
   */
  private startPrefill(s: Sequence, cachedTokens: number, budget: number, now: number): number {
    const len = s.length;
    s.numComputed = cachedTokens;
    s.prefillTarget = len;
    s.admissions++;
    this.observer.onAdmit(s.req, now, cachedTokens);
    const desired = Math.min(len - cachedTokens, budget);
    if (!this.ensureBlocks(s, cachedTokens + desired)) {
      throw new Error("internal: admitted request could not allocate the KV it was admitted for");
    }
    this.compute(s, desired);
    return desired;
  }

  /** The waiting head `s` is never admissible: it leaves the queue, rejected. */
  private rejectWaitingHead(s: Sequence): void {
    this.popWaiting();
    this.signal(s.req, Signal.Rejected);
  }

  /** What this pass left queued (the FPM's queued requests, `ai-dynamo/dynamo@0272cbd:components/src/dynamo/planner/core/types.py`). */
  private recordQueued(stats: PassStats): void {
    stats.numQueuedPrefill = this.waiting.length;
    stats.sumQueuedPrefillTokens = this.waitingTokens;
    stats.sumQueuedPrefillTokensSq = this.waitingTokensSq;
    stats.numQueuedDecode = this.remoteReady.length;
    stats.sumQueuedDecodeKvTokens = 0;
    stats.sumQueuedDecodeKvTokensSq = 0;
    for (let i = 0; i < this.remoteReady.length; i++) {
      const len = this.remoteReady.at(i).length;
      stats.sumQueuedDecodeKvTokens += len;
      stats.sumQueuedDecodeKvTokensSq += len * len;
    }
  }

  /**
   * Step 3 of a pass: every running request whose known tokens are all computed produces its
   * token (or burst) at pass end, and the finished ones leave the batch; the decode batch and its
   * KV tokens go to `stats`.
   */
  private emitTokens(stats: PassStats): void {
    const running = this.running;
    const prefillRole = this.config.role === "prefill";
    // No block is allocated after this point, so what it frees is exactly the finishing requests' KV.
    const activeBeforeEmit = this.pool.activeBlocks;
    let finishing = 0;
    let ready = 0;
    let activeKv = 0;
    // The ready requests whose prompt completed in this pass, and their KV: a vLLM worker's
    // forward-pass metrics count them as prefills only (the Dynamo mocker's `compute_fpm`:
    // a request that computed prompt tokens in the pass is a prefill, the others decodes,
    // `ai-dynamo/dynamo:lib/mocker/src/scheduler/vllm/core.rs`), and with `firstTokenAtPrefill`
    // the pass is priced without them.
    const atPrefill = this.config.firstTokenAtPrefill === true;
    let prefilledReady = 0;
    let prefilledKv = 0;
    let write = 0;
    for (let r = 0; r < running.length; r++) {
      const s = running[r];
      const len = s.length;
      if (s.numComputed < len) {
        running[write++] = s;
        continue;
      }
      if (s.generated >= s.maxOutput) {
        // Zero-output request: complete after prefill, no token, not decode work.
        finishing++;
        this.signal(s.req, Signal.Complete);
        this.releaseBlocks(s);
        continue;
      }
      ready++;
      activeKv += len;
      if (s.prefillDonePass === this.passSerial) {
        prefilledReady++;
        prefilledKv += len;
      } else stats.sumDecodeKvTokensSq += len * len;
      if (s.drafts > 0) {
        if (this.emitBurst(s)) finishing++;
        else running[write++] = s;
        continue;
      }
      s.generated++;
      if (s.generated >= s.maxOutput) {
        finishing++;
        if (prefillRole) {
          // Source-first hand-off (vLLM): the KV stays until the transfer completes.
          this.signal(s.req, Signal.PrefillDone);
          this.held.set(s.req, s);
        } else {
          this.signal(s.req, Signal.TokenAndComplete);
          this.releaseBlocks(s);
        }
      } else {
        this.signal(s.req, Signal.Token);
        running[write++] = s;
      }
    }
    // The length setter is a builtin call even when nothing is cut: most passes finish no request.
    if (write !== running.length) running.length = write;
    this.finishingInPass = finishing;
    this.blocksFreedAtPassEnd = activeBeforeEmit - this.pool.activeBlocks;
    stats.numDecodeRequests = ready - prefilledReady;
    stats.sumDecodeKvTokens = activeKv - prefilledKv;
    this.pricedDecodeRequests = atPrefill ? ready - prefilledReady : ready;
    this.pricedDecodeKv = atPrefill ? activeKv - prefilledKv : activeKv;
  }

  /**
   * A lone request whose context outgrew the whole cache can never be readmitted: reject it
   * rather than stall the worker (the reference only checks this for fresh requests).
   */
  private rejectOutgrownHead(budget: number): void {
    const cfg = this.config;
    if (
      this.running.length === 0 &&
      this.waiting.length > 0 &&
      this.pendingSignals === 0 &&
      budget === cfg.maxBatchedTokens
    ) {
      const head = this.waiting.front();
      if (Math.ceil(head.length / cfg.blockSize) > cfg.numGpuBlocks) this.rejectWaitingHead(head);
    }
  }

  /** The duration of the pass formed (its decode half as `emitTokens` priced it), from the timing model. */
  private passDurationMs(): number {
    const cfg = this.config;
    const activeKv = this.pricedDecodeKv;
    // A prefill worker's one token rides its prefill pass: no decode time (`ai-dynamo/dynamo@ac0be1b:lib/mocker/src/scheduler/vllm/core.rs`).
    const decodeBatch = cfg.role === "prefill" ? 0 : this.pricedDecodeRequests;
    const pass = this.passShape
      .setPrefillSums(this.prefillCount, this.prefillIslSum, this.prefillPrefixSum)
      .setDecode(
        decodeBatch,
        activeKv,
        decodeBatch > 0 ? activeKv / decodeBatch : 0,
        cfg.numGpuBlocks * cfg.blockSize,
      )
      .setDrafts(this.draftSequences, this.draftTokens);
    return pricePass(this.timing, pass);
  }

  /** Copies the running requests' rows into `runRows` (grown when short); returns their Σ sequence length. */
  private captureRunRows(batch: number): number {
    const running = this.running;
    if (this.runRows.length < batch) this.runRows = new Int32Array(Math.max(batch, 2 * this.runRows.length));
    const rows = this.runRows;
    let activeKv = 0;
    for (let i = 0; i < batch; i++) {
      rows[i] = running[i].req;
      activeKv += running[i].length;
    }
    return activeKv;
  }

  /**
   * Decode-run merging (issue 16 item 1): executes, from `now`, the run of *plain* decode passes
   * that `startPass` would execute one by one — every running request decodes one token and none
   * completes, nothing is admitted, nothing preempted — as long as each pass ends inside `window`,
   * and hands the run's tokens to `sink` at its end, with each pass's end. Returns the passes executed; the next pass
   * (plain or not) starts at `lastPassEnd` through `startPass`, which also prices a pass whose end
   * falls outside the window.
   *
   * Each pass does exactly what `startPass` does for such a batch, in the same order: per request
   * in batch order a block when a token starts one (`ensureBlocks`), the token's KV and newly full
   * blocks registered (`compute`), then the tokens; the same `passMs` arguments; the same pass
   * serials. Only the signal buffers, the statistics of the passes before the last (a Planner tick
   * is an event, so none falls inside a run) and the event queue are skipped.
   * test/sim/decodeRuns.property.test.ts compares it with pass-by-pass stepping byte for byte,
   * the metrics each scaling tick sees included.
   */
  runPlainDecodes(now: number, window: RunWindow, sink: PlainPassSink): number {
    const passesLeft = this.plainPassesAhead();
    if (passesLeft === 0) return 0;
    const cfg = this.config;
    const running = this.running;
    const batch = running.length;
    let activeKv = this.captureRunRows(batch);
    const rows = this.runRows;
    const bs = cfg.blockSize;
    const boundaries = this.boundaries;
    if (!boundaries.plan(running, batch, bs, cfg.prefixCaching)) return 0;
    const { allocStart } = boundaries;
    const pool = this.pool;
    const totalKv = cfg.numGpuBlocks * bs;
    const { limitMs, capMs, deadlineMs, responseMs } = window;
    let ends = this.runEnds;
    let t = now;
    let passes = 0;
    let lastMs = 0;
    // Pass durations are priced ahead in chunks (`decodeRunMs`: one call, nothing boxed per pass),
    // 8 at first and twice as many each time while the run goes on, up to RUN_PRICE_CHUNK; a
    // chunk's durations past where the run stops are not used (pricing has no side effect).
    const priced = this.runPassMs;
    let chunk = 8;
    let next = 0;
    let filled = 0;
    // Requests' numComputed and generated stay at their start values during the run (each pass
    // adds one to both; set at the end): block work reads `numComputed + passes`.
    while (passes < passesLeft) {
      const r = passes % bs;
      // Blocks this pass allocates; more than the pool can give means a preemption: not plain.
      if (allocStart[r + 1] - allocStart[r] > pool.availableBlocks) break;
      if (next === filled) {
        filled = Math.min(chunk, passesLeft - passes);
        decodeRunMs(this.timing, batch, activeKv, totalKv, filled, priced, this.passShape);
        next = 0;
        if (chunk < RUN_PRICE_CHUNK) chunk *= 2;
      }
      const ms = priced[next++];
      if (!(ms >= 0) || !Number.isFinite(ms)) {
        throw new Error(`timing model returned a non-finite or negative duration (${ms})`);
      }
      const end = t + ms;
      if (!(end < limitMs) || end > capMs || end + responseMs > deadlineMs) break;
      this.passSerial++;
      // As startPass: a block this pass registers may push a host block to disk from now.
      if (this.host !== null) this.host.tier.nowMs = t;
      this.plainPassBlocks(r, passes, batch);
      this.lastPassEndMs = end;
      if (passes === ends.length) {
        const grown = new Float64Array(2 * passes);
        grown.set(ends);
        ends = grown;
        this.runEnds = grown;
      }
      ends[passes] = end;
      lastMs = ms;
      activeKv += batch;
      t = end;
      passes++;
    }
    for (let i = 0; i < batch; i++) {
      const s = running[i];
      s.numComputed += passes;
      s.generated += passes;
    }
    if (passes > 0) {
      this.publishLastPlainPass(batch, lastMs);
      // Nothing reads the collector while the run executes: one delivery is pass-by-pass delivery.
      sink.onPlainRun(rows, batch, ends, passes);
    }
    return passes;
  }

  /**
   * The block work of a run's pass `passes` (its row `r` of the run's block boundaries): the
   * requests at a block boundary, in batch order as startPass visits them, a block allocated
   * before its token is computed (ensureBlocks), a filled block registered after (compute).
   */
  private plainPassBlocks(r: number, passes: number, batch: number): void {
    const { allocStart, allocRows, fillStart, fillRows } = this.boundaries;
    const running = this.running;
    let a = allocStart[r];
    const aEnd = allocStart[r + 1];
    let f = fillStart[r];
    const fEnd = fillStart[r + 1];
    while (a < aEnd || f < fEnd) {
      const ia = a < aEnd ? allocRows[a] : batch;
      const iff = f < fEnd ? fillRows[f] : batch;
      if (ia <= iff) {
        const s = running[ia];
        if (!this.ensureBlocks(s, s.numComputed + passes + 1)) {
          throw new Error("internal: a plain decode pass could not allocate the blocks it counted");
        }
        a++;
      } else {
        const s = running[iff];
        const before = s.numComputed + passes;
        this.registerFullBlocks(s, before, before + 1);
        f++;
      }
    }
  }

  /**
   * The run's last pass as `startPass` would have recorded it, so that it is the engine's
   * published metrics (`publishedStats`) once it has ended, and the prior pass of the next one:
   * a Planner tick after the run sees that pass, not the one before the run. Its batch decoded
   * one token each at one less than the lengths the run left; nothing was admitted or queued
   * meanwhile.
   */
  private publishLastPlainPass(batch: number, ms: number): void {
    const stats = this.stats;
    stats.reset();
    this.recordQueued(stats);
    const running = this.running;
    let kv = 0;
    let kvSq = 0;
    for (let i = 0; i < batch; i++) {
      const len = running[i].length - 1;
      kv += len;
      kvSq += len * len;
    }
    stats.numDecodeRequests = batch;
    stats.sumDecodeKvTokens = kv;
    stats.sumDecodeKvTokensSq = kvSq;
    stats.wallTimeS = ms / 1000;
  }

  /** Whether the next pass is a plain decode pass (`runPlainDecodes` would run it, given room). */
  canRunPlainDecodes(): boolean {
    return this.plainPassesAhead() > 0;
  }

  /**
   * Plain decode passes the batch can run before one of its requests completes (0 when the next
   * pass is not one: admission would be tried, a request is not decode-ready, or the token budget
   * does not cover the batch). Whether the KV cache has the blocks is checked pass by pass.
   */
  private plainPassesAhead(): number {
    const cfg = this.config;
    const running = this.running;
    const batch = running.length;
    // A speculating batch grows by a sampled burst per sequence per pass: never a plain run.
    if (cfg.role === "prefill" || this.draftLimit > 0 || batch === 0 || batch > cfg.maxBatchedTokens) {
      return 0;
    }
    // Admission would run (startPass step 2): the queue heads are tried, not a plain pass.
    if (
      batch < cfg.maxSequences &&
      batch < cfg.maxBatchedTokens &&
      (this.waiting.length > 0 || this.remoteReady.length > 0 || this.loadedReady.length > 0)
    ) {
      return 0;
    }
    let passesLeft = Number.POSITIVE_INFINITY;
    for (let i = 0; i < batch; i++) {
      const s = running[i];
      // Decode-ready: exactly the last generated token's KV to compute — not a prefill chunk (the
      // last one may be a single token too), not a hand-off's first pass (nothing to compute).
      if (s.numComputed !== s.length - 1 || s.numComputed < s.prefillTarget) return 0;
      const left = s.maxOutput - s.generated - 1;
      if (left < passesLeft) passesLeft = left;
    }
    return Math.max(0, passesLeft);
  }

  /**
   * Emits the tokens of a sequence that verified `s.drafts` drafts in this pass (speculative
   * decoding): 1 + the accepted leading drafts, capped by its remaining output (the draft count
   * already is). The accepted drafts' KV is kept — they become computed tokens, their full blocks
   * registered — and the slots of the rejected ones are freed; the last emitted token is left to
   * compute, as after any decode pass. Returns whether the request completed (its KV released).
   */
  private emitBurst(s: Sequence): boolean {
    const drafts = s.drafts;
    s.drafts = 0;
    const tokens = this.sampler!.burst(s.req, s.generated, drafts);
    const stats = this.stats;
    stats.specDrafts++;
    stats.specDraftTokens += drafts;
    stats.specTokens += tokens;
    const before = s.numComputed;
    s.numComputed = before + tokens - 1;
    if (this.config.prefixCaching) this.registerFullBlocks(s, before, s.numComputed);
    for (let k = 1; k < tokens; k++) this.signal(s.req, Signal.Token);
    s.generated += tokens;
    if (s.generated >= s.maxOutput) {
      this.signal(s.req, Signal.TokenAndComplete);
      this.releaseBlocks(s);
      return true;
    }
    this.signal(s.req, Signal.Token);
    // Rejected drafts' slots: blocks past the computed tokens were allocated for them only.
    const keep = Math.ceil(s.numComputed / this.config.blockSize);
    const blocks = s.blocks;
    for (let k = blocks.length - 1; k >= keep; k--) this.pool.release(blocks.ids[k]);
    if (blocks.length > keep) blocks.length = keep;
    return false;
  }

  /**
   * Computes `desired` more tokens of `s` (its KV is already allocated): prefill statistics for
   * the pass, and newly full blocks become visible to prefix lookups at once, so later requests
   * in the same pass can hit them.
   */
  private compute(s: Sequence, desired: number): void {
    const before = s.numComputed;
    if (before < s.prefillTarget) {
      // Positions below the length at admission are prefill work (prompt, or recompute).
      const chunk = Math.min(desired, s.prefillTarget - before);
      if (chunk === s.prefillTarget - before) s.prefillDonePass = this.passSerial;
      this.stats.sumPrefillTokens += chunk;
      const n = ++this.prefillCount;
      const delta = s.promptLength - this.prefillLengthMean;
      this.prefillLengthMean += delta / n;
      this.prefillLengthM2 += delta * (s.promptLength - this.prefillLengthMean);
      this.prefillIslSum += before + chunk;
      this.prefillPrefixSum += before;
    }
    s.numComputed = before + desired;
    if (this.config.prefixCaching) this.registerFullBlocks(s, before, s.numComputed);
  }

  /**
   * Offloaded blocks continuing `s`'s prefix after its `gpuBlocks` GPU hits, each in host memory
   * or (with a disk tier) on disk, up to the blocks a prefix hit may cover (the last token is
   * always recomputed), contiguous as GPU hits are; how many of them are on disk is left in
   * `runDiskBlocks`. A disk block whose write has not landed ends the run.
   */
  private offloadHits(s: Sequence, gpuBlocks: number, len: number, now: number): number {
    const host = this.host!;
    const tier = host.tier;
    const disk = host.disk;
    const limit = Math.min(
      Math.floor((len - 1) / this.config.blockSize),
      s.promptFullBlocks + s.outputHashes.length,
    );
    let onDisk = 0;
    let k = gpuBlocks;
    for (; k < limit; k++) {
      const hash = this.hashOf(s, k);
      if (tier.has(hash)) continue;
      if (disk === null || !disk.probe(hash, now)) break;
      onDisk++;
    }
    this.runDiskBlocks = onDisk;
    return k - gpuBlocks;
  }

  /**
   * Admits `s` into a load of its `loadBlocks` offloaded blocks: its GPU hits are held, blocks for
   * the loaded ones are allocated now, and it joins the batch once they land (vLLM's connector
   * keeps such a request out of the batch, WAITING_FOR_REMOTE_KVS, while other requests run). The
   * run's disk blocks are read into host memory first; then all of them cross the GPU's host link.
   */
  private startLoad(s: Sequence, gpuBlocks: number, loadBlocks: number, now: number): void {
    const host = this.host!;
    const bs = this.config.blockSize;
    const disk = host.disk;
    for (let k = gpuBlocks; k < gpuBlocks + loadBlocks; k++) {
      const hash = this.hashOf(s, k);
      if (host.tier.has(hash)) host.tier.touch(hash);
      else disk!.touchRead(hash, host.diskReader);
    }
    const staged = this.runDiskBlocks > 0 ? disk!.scheduleRead(now, this.runDiskBlocks, host.diskLink) : now;
    s.numComputed = gpuBlocks * bs;
    s.prefillTarget = s.length;
    // The whole known length, as admission checked it fits: the request then joins the batch
    // without needing more blocks for its prefill (a cache filled meanwhile cannot strand it).
    if (!this.ensureBlocks(s, s.length)) {
      throw new Error("internal: admitted request could not allocate the KV it loads");
    }
    s.loadedBlocks = loadBlocks;
    this.loading.set(s.req, s);
    host.scheduleLoadEnd(
      s.req,
      host.tier.scheduleLoad(staged, loadBlocks, host.bytesPerBlock, host.link, now),
    );
  }

  /**
   * The host blocks of `req` landed: they count as computed, become visible to prefix lookups,
   * and the request waits for a slot in the batch. False when the request is no longer here
   * (cancelled during its load).
   */
  completeLoad(req: number): boolean {
    const s = takeEntry(this.loading, req);
    if (s === undefined) return false;
    const from = s.numComputed;
    s.numComputed = from + s.loadedBlocks * this.config.blockSize;
    s.loadedBlocks = 0;
    if (this.config.prefixCaching) this.registerFullBlocks(s, from, s.numComputed);
    this.loadedReady.pushBack(s);
    return true;
  }

  /** Prefill role: frees the KV held for a request whose transfer completed (leaf first). */
  releaseHeld(req: number): void {
    const s = takeEntry(this.held, req);
    if (s === undefined) throw new Error(`internal: no KV held for request ${req}`);
    this.releaseBlocks(s);
  }

  /** Prefill role: requests whose KV is held for a transfer. */
  get heldCount(): number {
    return this.held.size;
  }

  /**
   * Cancels a request wherever this engine holds it — waiting, running, an arrived hand-off, or
   * KV held for a transfer — and frees its KV and sequence slot (vLLM's abort; a client timeout,
   * docs/client.md). Call it between passes: a request in the batch of a pass in flight is
   * cancelled when that pass ends. Returns false when the engine does not hold the request.
   */
  cancel(req: number): boolean {
    const waiting = this.waiting.remove(req);
    if (waiting !== null) {
      const len = waiting.length;
      this.waitingTokens -= len;
      this.waitingTokensSq -= len * len;
      this.releaseForReturn(waiting);
      return true;
    }
    const running = this.running;
    for (let i = 0; i < running.length; i++) {
      if (running[i].req !== req) continue;
      const s = running[i];
      running.splice(i, 1);
      this.releaseForReturn(s);
      return true;
    }
    const remote = this.remoteReady.remove(req);
    if (remote !== null) {
      this.releaseForReturn(remote);
      return true;
    }
    const held = takeEntry(this.held, req);
    if (held !== undefined) {
      this.releaseForReturn(held);
      return true;
    }
    const loading = takeEntry(this.loading, req);
    if (loading !== undefined) {
      this.releaseForReturn(loading);
      return true;
    }
    const loaded = this.loadedReady.remove(req);
    if (loaded === null) return false;
    this.releaseForReturn(loaded);
    return true;
  }

  /** Decode role: drops a reservation whose KV has not arrived (the hand-off was cancelled). */
  cancelReservation(s: Sequence): void {
    if (this.reserved <= 0) throw new Error(`internal: no reservation to cancel for request ${s.req}`);
    this.reserved--;
    this.releaseForReturn(s);
  }

  /**
   * Decode role: reserves blocks for a hand-off's prompt, reusing blocks of the prompt's prefix
   * already resident here. Returns the resident (reused) prompt tokens, or -1 when the request
   * cannot be reserved now (the caller retries when this engine frees capacity): reservations
   * plus running requests stay within max_sequences, and the blocks must be free.
   */
  tryReserve(s: Sequence): number {
    const cfg = this.config;
    const bs = cfg.blockSize;
    if (this.reserved + this.running.length >= cfg.maxSequences) return -1;
    this.completeHashesPastOwnerOnly(s);
    const knownBlocks = Math.ceil(s.promptLength / bs);
    let hits = 0;
    let activeHits = 0;
    if (cfg.prefixCaching) {
      // As at admission (`admitWaiting`): nothing can hit from `ownerOnlyFrom` on.
      hits = this.findCachedPrefix(s, Math.min(s.promptFullBlocks, this.ownerOnlyStart(s)));
      activeHits = this.activeHits(hits);
    }
    if (knownBlocks - activeHits > this.pool.availableBlocks) return -1;
    this.acquireHits(s, hits);
    if (!this.ensureBlocks(s, s.promptLength)) {
      throw new Error("internal: reserved blocks could not be allocated");
    }
    this.reserved++;
    s.residentTokens = hits * bs;
    return s.residentTokens;
  }

  /** Decode role: the transferred KV arrived; the request waits for admission with its prompt computed. */
  activate(s: Sequence): void {
    this.reserved--;
    s.numComputed = s.promptLength;
    s.prefillTarget = s.promptLength;
    // The prompt blocks become visible to prefix lookups only now (no events before activation).
    if (this.config.prefixCaching) this.registerFullBlocks(s, 0, s.promptLength);
    this.remoteReady.pushBack(s);
  }

  /** Decode role: reservations waiting for their KV. */
  get reservedCount(): number {
    return this.reserved;
  }

  private pushWaiting(s: Sequence, front: boolean): void {
    const len = s.length;
    this.waitingTokens += len;
    this.waitingTokensSq += len * len;
    if (front) this.waiting.pushFront(s);
    else this.waiting.pushBack(s);
  }

  private popWaiting(): Sequence {
    const s = this.waiting.popFront();
    const len = s.length;
    this.waitingTokens -= len;
    this.waitingTokensSq -= len * len;
    return s;
  }

  /** Allocates blocks until `tokens` positions are covered; false when the cache is exhausted. */
  private ensureBlocks(s: Sequence, tokens: number): boolean {
    const bs = this.config.blockSize;
    const need = Math.ceil(tokens / bs);
    const blocks = s.blocks;
    // Sized once for the whole request (speculative drafts may ask for a few more).
    if (blocks.ids.length < need) this.blockArrays.reserve(blocks, Math.max(need, toCompletionBlocks(s, bs)));
    if (blocks.length >= need) return true;
    blocks.length = this.pool.allocateInto(blocks.ids, blocks.length, need);
    return blocks.length === need;
  }

  /** Makes blocks that became full between `from` and `to` computed tokens visible to lookups. */
  private registerFullBlocks(s: Sequence, from: number, to: number): void {
    const bs = this.config.blockSize;
    const first = Math.floor(from / bs);
    let end = Math.floor(to / bs);
    // Most calls (a decode token inside its block) fill no block.
    if (end <= first) return;
    // Owner-only blocks are registered by position: no hash, no index entry (releaseBlocks).
    end = Math.min(end, this.ownerOnlyStart(s));
    const key = this.key;
    // The home of the group's first block, mixed once a group (`homeOf`).
    let groupHome = 0;
    for (let k = first; k < end; k++) {
      if (k >= s.promptFullBlocks && k - s.promptFullBlocks >= s.outputHashes.length) {
        const parent = k === 0 ? SEQUENCE_HASH_SEED : this.hashOf(s, k - 1);
        s.outputHashes.push(outputBlockHash(parent, s.req, k));
      }
      const offset = k % INDEX_GROUP;
      if (offset === 0 || k === first) groupHome = this.homeOf(s, k - offset);
      key[0] = this.hashOf(s, k);
      if (this.pool.registerAt(s.blocks.ids[k], key, 0, (groupHome + offset) | 0) && this.host !== null)
        this.host.tier.store(key[0]);
    }
  }

  /**
   * The blocks of `s`'s longest cached prefix among its first `limit` blocks, into `hitBlocks`;
   * returns how many.
   */
  private findCachedPrefix(s: Sequence, limit: number): number {
    if (this.hitBlocks.length < limit)
      this.hitBlocks = new Int32Array(Math.max(limit, 2 * this.hitBlocks.length));
    const hits = this.hitBlocks;
    const pool = this.pool;
    const key = this.key;
    let k = 0;
    // The home of the group's first block, mixed once a group (`homeOf`).
    let groupHome = 0;
    for (; k < limit; k++) {
      const offset = k % INDEX_GROUP;
      key[0] = this.hashOf(s, k);
      if (offset === 0) groupHome = this.homeOf(s, k);
      const b = pool.lookupAt(key, 0, (groupHome + offset) | 0);
      if (b < 0) break;
      hits[k] = b;
    }
    return k;
  }

  /** How many of the first `count` blocks of `hitBlocks` are in use by a request (shared, not re-consumed). */
  private activeHits(count: number): number {
    const pool = this.pool;
    const hits = this.hitBlocks;
    let active = 0;
    for (let k = 0; k < count; k++) if (pool.isActive(hits[k])) active++;
    return active;
  }

  /** `s` takes a reference on the first `count` blocks of `hitBlocks`, its cached prefix. */
  private acquireHits(s: Sequence, count: number): void {
    if (count > 0)
      this.blockArrays.reserve(s.blocks, Math.max(count, toCompletionBlocks(s, this.config.blockSize)));
    for (let k = 0; k < count; k++) {
      const b = this.hitBlocks[k];
      this.pool.acquire(b);
      s.blocks.push(b);
    }
  }

  /**
   * The prefix-cache index home of block `k` of `s` (engine/blockIndex.ts "Grouped homes"): the
   * mix of the hash of the first block of its run of `INDEX_GROUP`, which the prefix up to it
   * determines, plus its place in the run.
   */
  private homeOf(s: Sequence, k: number): number {
    const offset = k % INDEX_GROUP;
    return (mixBlockHash(this.hashOf(s, k - offset)) + offset) | 0;
  }

  private hashOf(s: Sequence, k: number): number {
    return k < s.promptFullBlocks
      ? s.promptHashes[s.promptHashOffset + k]
      : s.outputHashes[k - s.promptFullBlocks];
  }

  /**
   * Invariant check (tests): KV blocks are conserved — the pool's references are exactly those
   * of the sequences that own blocks here (running, held for a transfer, arrived hand-offs, and
   * `reservedElsewhere`: hand-offs reserved here whose KV is still in flight, which the replay
   * keeps) — and every owner's blocks cover the tokens it has computed. Returns the first
   * violation, or null.
   */
  auditKv(reservedElsewhere: readonly Sequence[]): string | null {
    const refs = new Int32Array(this.pool.capacity);
    const bs = this.config.blockSize;
    let problem: string | null = null;
    const own = (s: Sequence, where: string): void => {
      for (let k = 0; k < s.blocks.length; k++) refs[s.blocks.ids[k]]++;
      if (problem === null && s.numComputed > s.blocks.length * bs && where !== "waiting") {
        problem = `request ${s.req} (${where}) computed ${s.numComputed} tokens in ${s.blocks.length} blocks of ${bs}`;
      }
      if (problem === null && where === "waiting" && s.blocks.length > 0) {
        problem = `waiting request ${s.req} holds ${s.blocks.length} blocks`;
      }
    };
    for (const s of this.running) own(s, "running");
    for (const s of this.held.values()) own(s, "held");
    for (let i = 0; i < this.remoteReady.length; i++) own(this.remoteReady.at(i), "arrived hand-off");
    for (let i = 0; i < this.waiting.length; i++) own(this.waiting.at(i), "waiting");
    for (const s of this.loading.values()) {
      own(s, "loading");
      if (problem === null && s.numComputed + s.loadedBlocks * bs > s.blocks.length * bs) {
        problem = `request ${s.req} loads ${s.loadedBlocks} host blocks into ${s.blocks.length} blocks`;
      }
    }
    for (let i = 0; i < this.loadedReady.length; i++) own(this.loadedReady.at(i), "loaded");
    for (const s of reservedElsewhere) own(s, "reserved");
    if (reservedElsewhere.length !== this.reserved) {
      return `${this.reserved} reservations counted, ${reservedElsewhere.length} in flight`;
    }
    return problem ?? this.pool.audit(refs);
  }

  /** LIFO preemption of the newest running request: release its KV, recompute it later. */
  private preempt(): void {
    const victim = this.running.pop()!;
    this.releaseForReturn(victim);
    victim.numComputed = 0;
    this.preemptions++;
    this.pushWaiting(victim, true);
  }

  /**
   * Where `s`'s owner-only blocks start (engine/kvBlockPool.ts "Owner-only runs"); +∞ when this
   * engine registers every block in the index: without prefix caching (nothing is registered),
   * with a host tier (it stores every registered hash) or with a KV event listener (events are
   * per hash).
   */
  private ownerOnlyStart(s: Sequence): number {
    return this.host === null && !this.pool.hasListener ? s.ownerOnlyFrom : Number.POSITIVE_INFINITY;
  }

  /**
   * The engine reads `s`'s prompt hashes up to `ownerOnlyStart(s)` only; a source that hashes
   * lazily gave those before `ownerOnlyFrom` (traffic/mooncake/stream.ts "Lazy hashes"): an
   * engine that indexes every block has the rest written now.
   */
  private completeHashesPastOwnerOnly(s: Sequence): void {
    if (this.ownerOnlyStart(s) > s.promptHashedBlocks) s.completePromptHashes();
  }

  /**
   * A completing request lets its KV go, leaf first, so a suffix becomes an older LRU entry than
   * its parent: its unregistered tail blocks to the free list, its registered owner-only blocks as
   * one run, then the rest block by block.
   */
  private releaseBlocks(s: Sequence): void {
    const blocks = s.blocks;
    const ids = blocks.ids;
    const n = blocks.length;
    const pool = this.pool;
    let from = n;
    let to = n;
    if (this.config.prefixCaching) {
      from = Math.min(this.ownerOnlyStart(s), n);
      to = Math.max(from, Math.min(Math.floor(s.numComputed / this.config.blockSize), n));
    }
    for (let k = n - 1; k >= to; k--) pool.release(ids[k]);
    pool.releaseOwnerOnlyRun(ids, from, to);
    for (let k = from - 1; k >= 0; k--) pool.release(ids[k]);
    blocks.length = 0;
    this.blockArrays.release(blocks);
  }

  /**
   * A request that leaves without completing (preempted, cancelled) and may be admitted here
   * again lets its KV go with every registered block in the index, so that its re-admission finds
   * its prefix as the block-at-a-time pool would; it stays block at a time from then on.
   */
  private releaseForReturn(s: Sequence): void {
    const from = this.ownerOnlyStart(s);
    s.ownerOnlyFrom = Number.POSITIVE_INFINITY;
    // Its whole prompt may be looked up or registered from now on.
    s.completePromptHashes();
    if (this.config.prefixCaching && from < s.blocks.length) {
      this.registerFullBlocks(s, from * this.config.blockSize, s.numComputed);
    }
    this.releaseBlocks(s);
  }
}
