/**
 * SGLang-like scheduler core of one attention-DP rank (`ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`; the reference mocker's
 * `scheduler/sglang/{core,prefill,decode,policy}.rs`; docs/backends.md).
 *
 * A pass (`startPass`): order the waiting queue (FIFO, or longest prefix match while at most 128
 * wait), admit a prefill batch under three budgets (`rem_total`: free + evictable tokens less
 * page-rounding slack and each running request's expected output, `min(remaining, clip) ×
 * new_token_ratio`; `rem_input`: max_prefill_tokens; `rem_chunk`: chunked_prefill_size), with
 * strict head-of-line stopping. A request whose prompt does not finish in its chunk goes back to
 * the waiting front with its KV kept (its full pages cached in the radix tree). If a prefill batch
 * formed, the pass is an extend pass: only the requests whose prefill completed in it decode
 * (their first token) and every other running request waits, so a long prompt starves decode;
 * with `enable_mixed_chunk` (SGLang's `--enable-mixed-chunk`) the running requests decode in that
 * pass too, one budget token each. Otherwise all running requests decode one token; when their page
 * growth does not fit the free + evictable pages, the request with the fewest output tokens is
 * retracted (its KV freed, its cached prefix left in the tree, recomputed later) while more than
 * one remains. `new_token_ratio` starts at 0.7 × schedule_conservativeness, decays linearly to 14 %
 * of that over 600 passes, and resets on a retraction or a failed allocation.
 *
 * KV (radixCache.ts): a request's cached prefix is a locked path in the tree; the pages past it are
 * its own (private) until they fill and are inserted. The KV slot of a generated token is taken
 * when the token is generated (SGLang), not when it is next computed (vLLM). On completion the
 * page-aligned context is cached and the partial page freed. Router events (`Stored` / `Removed`)
 * become visible at pass end (SGLang's `PassEnd` visibility), when the replay takes the signals.
 *
 * Speculative decoding (`engine.nextn`, docs/speculation.md "On SGLang"): a request that was
 * decoding before the pass verifies its token and up to K drafts. The retraction check counts the
 * pages of 1 + drafts tokens per request (the reference's `max_burst`), those pages are reserved
 * for the whole batch before any burst is emitted, and each request keeps the pages of the tokens
 * its burst emitted; the rejected drafts' pages go back to the free list. Mixed chunk is off while
 * speculating, as SGLang turns it off (a config rule refuses the pair).
 */

import { PassShape } from "../timing/passShape.js";
import type { TimingModel } from "../timing/timingModel.js";
import { SEQUENCE_HASH_SEED } from "../util/blockHash.js";
import { takeEntry } from "../util/mapTake.js";
import { outputBlockHash } from "../util/outputBlockHash.js";
import type { SglangEngineConfig } from "./engineConfig.js";
import type { KvEventListener } from "./kvBlockPool.js";
import { pricePass } from "./passPricing.js";
import { PassSignals, signalCapacity } from "./passSignals.js";
import { PassStats, varianceOf } from "./passStats.js";
import { NO_NODE, RadixCache } from "./radixCache.js";
import type { Sequence } from "./sequence.js";
import { SequenceQueue } from "./sequenceQueue.js";
import { Signal } from "./signal.js";
import { BurstSampler } from "./speculation.js";
import type { AdmissionObserver, KvCacheView, WorkerEngine } from "./workerEngine.js";

/** `ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`: the ratio decays from init to init × 0.14 over 600 passes. */
const MIN_RATIO_FACTOR = 0.14;
const DECAY_PASSES = 600;
const INIT_RATIO_FACTOR = 0.7;
/** LPM sorting is skipped above this many waiting requests (the reference's fallback to FIFO). */
const LPM_FALLBACK_THRESHOLD = 128;
/** In-batch prefix dedupe: a request matching at most this many cached tokens whose first pages duplicate an earlier waiting request's is deprioritized. */
const DEDUPE_TOKENS = 32;

/** Router events of a pass, held until its end (SGLang's pass-end visibility). */
class PassEndEvents implements KvEventListener {
  target: KvEventListener | null = null;
  private kinds: number[] = [];
  private hashes: number[] = [];

  onBlockStored(hash: number): void {
    if (this.target === null) return;
    this.kinds.push(1);
    this.hashes.push(hash);
  }

  onBlockRemoved(hash: number): void {
    if (this.target === null) return;
    this.kinds.push(0);
    this.hashes.push(hash);
  }

  flush(): void {
    const t = this.target;
    if (t === null || this.kinds.length === 0) return;
    for (let i = 0; i < this.kinds.length; i++) {
      if (this.kinds[i] === 1) t.onBlockStored(this.hashes[i]);
      else t.onBlockRemoved(this.hashes[i]);
    }
    this.kinds.length = 0;
    this.hashes.length = 0;
  }
}

export class SglangEngine extends PassSignals implements WorkerEngine {
  readonly pool: KvCacheView;
  readonly cache: RadixCache;
  readonly stats = new PassStats();
  /** The shape of the pass being priced, refilled for every pass. */
  private readonly passShape = new PassShape();
  /**
   * Whether this pass may form a prefill batch: false while `prefill_decode_interval` defers
   * prefill after a prefill pass (the cluster counts the passes, `Cluster.prefillNotDeferred`), as
   * SGLang's `_should_defer_prefill` skips `get_new_batch_prefill`, partial chunks included.
   */
  admitsWaiting = true;
  /** Retractions over the engine's life (SGLang's preemption). */
  preemptions = 0;
  lastPassProgressed = false;
  /** The current new_token_ratio (exposed for tests). */
  newTokenRatio: number;
  private readonly initRatio: number;
  private readonly minRatio: number;
  private readonly decayStep: number;
  private readonly page: number;
  private readonly waiting = new SequenceQueue();
  private running: Sequence[] = [];
  /** Decode role: hand-offs whose KV arrived, joining the batch next pass. */
  private readonly remoteReady = new SequenceQueue();
  private readonly held = new Map<number, Sequence>();
  private reserved = 0;
  private readonly events = new PassEndEvents();
  // Scratch of a pass.
  private canRun: Sequence[] = [];
  private decodeSet: Sequence[] = [];
  /** Passes started so far; a request records it when queued (the overlap scheduler's visibility). */
  private passSerial = 0;
  /** Waiting requests queued at or after this pass serial are not visible to this pass. */
  private visibleBelow = Number.POSITIVE_INFINITY;
  private retracted: Sequence[] = [];
  /** Pages the requests finishing in this pass gave back (the time series adds them back while it runs). */
  private freedByFinishing = 0;
  /** Σ chunk end of the prefill batch formed (`admitPrefillBatch`; the rest of what prices the pass is in `stats`). */
  private prefillIslSum = 0;
  /** Speculative decoding: draft tokens per request per pass (0 = off) and the acceptance draws. */
  private readonly draftLimit: number;
  private readonly sampler: BurstSampler | null;
  /**
   * `enable_mixed_chunk` as it runs: off while speculating (SGLang's server args turn it off under
   * speculative decoding, "Mixed chunked prefill is disabled because of using eagle speculative
   * decoding"; the config refuses the pair, so only a hand-built engine meets it).
   */
  private readonly mixedChunk: boolean;

  constructor(
    private readonly config: SglangEngineConfig,
    private readonly timing: TimingModel,
    private readonly observer: AdmissionObserver,
  ) {
    // Room for the largest batch's signals (engine/passSignals.ts `signalCapacity`).
    super(signalCapacity(config.maxSequences));
    this.page = config.blockSize;
    this.cache = new RadixCache(config.numGpuBlocks);
    this.cache.setListener(this.events);
    const events = this.events;
    const cache = this.cache;
    this.pool = {
      get capacity() {
        return cache.capacity;
      },
      get activeBlocks() {
        return cache.activeBlocks;
      },
      get availableBlocks() {
        return cache.availableBlocks;
      },
      setListener(listener: KvEventListener | null) {
        events.target = listener;
      },
    };
    this.initRatio =
      (config.sglang.newTokenRatioFactor ?? INIT_RATIO_FACTOR) * config.sglang.scheduleConservativeness;
    this.minRatio = this.initRatio * MIN_RATIO_FACTOR;
    this.decayStep = (this.initRatio - this.minRatio) / DECAY_PASSES;
    this.newTokenRatio = this.initRatio;
    const spec = config.role === "prefill" ? null : (config.speculation ?? null);
    this.draftLimit = spec === null ? 0 : spec.numSpeculativeTokens;
    this.sampler = spec === null ? null : new BurstSampler(spec);
    this.mixedChunk = config.sglang.enableMixedChunk === true && this.draftLimit === 0;
  }

  get waitingCount(): number {
    return this.waiting.length + this.remoteReady.length;
  }

  get runningCount(): number {
    return this.running.length;
  }

  get inFlight(): number {
    return this.waiting.length + this.running.length + this.remoteReady.length;
  }

  get heldCount(): number {
    return this.held.size;
  }

  get reservedCount(): number {
    return this.reserved;
  }

  hasWork(): boolean {
    return this.waiting.length > 0 || this.running.length > 0 || this.remoteReady.length > 0;
  }

  isIdle(): boolean {
    return !this.hasWork() && this.held.size === 0 && this.reserved === 0;
  }

  enqueue(seq: Sequence): void {
    // The radix cache matches and inserts the whole prompt (no owner-only shortcut here).
    seq.completePromptHashes();
    seq.queuedAfterPass = this.passSerial;
    this.waiting.pushBack(seq);
  }

  /** The pass's signals, at its end; its router events become visible now too. */
  override takeSignals(): number {
    this.events.flush();
    return super.takeSignals();
  }

  /** Decode-run merging is a vLLM-core optimisation: SGLang steps pass by pass. */
  canRunPlainDecodes(): boolean {
    return false;
  }

  runPlainDecodes(): number {
    return 0;
  }

  /** No host KV tier on SGLang (a config rule). */
  completeLoad(): boolean {
    return false;
  }

  startPass(now: number): number {
    const cfg = this.config;
    const stats = this.stats;
    this.beginPassStats(stats);
    stats.reset();
    this.pendingSignals = 0;
    // The overlap scheduler (`scheduler.async_scheduling`): this batch was formed while the
    // previous one ran, so it sees only requests queued before that; after an idle gap or an
    // empty batch it was formed just now and sees everything (as the vLLM core's async scheduling).
    const previousSerial = this.passSerial++;
    const backToBack = cfg.asyncScheduling === true && now === this.lastPassEndMs && this.running.length > 0;
    this.visibleBelow = backToBack ? previousSerial : Number.POSITIVE_INFINITY;
    this.cache.tick();
    const running = this.running;
    this.freedByFinishing = 0;

    // Hand-offs whose KV arrived join the batch; no fresh prefill forms in such a pass.
    // A hand-off's first pass emits its token without drafts (as after a prefill): the requests
    // below `decoding` were running before this pass.
    const decoding = running.length;
    const promoted = this.promoteArrived(now);

    const admits = !promoted && this.admitsWaiting;
    if (admits && cfg.sglang.schedulePolicy === "lpm") this.orderLongestPrefixFirst();
    const canRun = this.canRun;
    canRun.length = 0;
    this.prefillIslSum = 0;
    if (admits && this.admitPrefillBatch(now, canRun)) this.newTokenRatio = this.initRatio;
    const batch = canRun.length;
    const unblocked = batch === 0 && !promoted && running.length === 0 && this.breakDeadlock();

    const extend = this.formDecodeSet(canRun, decoding);
    this.recordQueued(stats);
    this.finishingInPass = this.decodeStep(this.decodeSet, extend);
    const retracted = this.settleBatch(extend);

    this.blocksFreedAtPassEnd = this.freedByFinishing;
    stats.numPrefillRequests = batch;
    stats.varPrefillLength = varianceOf(batch, stats.sumPrefillTokens, stats.sumPrefillTokensSq);
    this.lastPassProgressed = batch > 0 || promoted || this.pendingSignals > 0 || retracted || unblocked;
    return this.endPass(now, this.passDurationMs(batch), stats);
  }

  /** Hand-offs whose KV arrived join the running batch while it has room; returns whether any did. */
  private promoteArrived(now: number): boolean {
    const running = this.running;
    let promoted = false;
    while (running.length < this.config.maxSequences && this.remoteReady.length > 0) {
      const s = this.remoteReady.popFront();
      s.admissions++;
      this.observer.onAdmit(s.req, now, 0);
      running.push(s);
      promoted = true;
    }
    return promoted;
  }

  /**
   * The requests that decode in this pass, into `decodeSet`: the prefill batch `canRun`'s whose
   * prompt finished, and the running ones unless this is an extend pass; returns whether it is
   * (a prefill batch formed without mixed chunk). The first `decoding` running requests were
   * decoding before the pass (they may speculate).
   */
  private formDecodeSet(canRun: readonly Sequence[], decoding: number): boolean {
    const running = this.running;
    const batch = canRun.length;
    // Partial prompts go back to the front (their full pages cached); finished ones decode.
    const decodeSet = this.decodeSet;
    decodeSet.length = 0;
    for (let i = batch - 1; i >= 0; i--) {
      const s = canRun[i];
      if (s.numComputed < s.length) {
        this.cacheMaterialized(s);
        this.waiting.pushFront(s);
      }
    }
    // Their first token is sampled from the prefill forward's own logits: it is not a decode row
    // of the pass (`prefillDonePass`, read by `decodeStep`).
    for (let i = 0; i < batch; i++)
      if (canRun[i].numComputed >= canRun[i].length) {
        canRun[i].prefillDonePass = this.passSerial;
        decodeSet.push(canRun[i]);
      }
    // Mixed chunk: the running requests decode in the prefill pass, after its new requests (the
    // order of SGLang's mix_with_running), and the whole set is the running batch afterwards.
    const mixed = batch > 0 && running.length > 0 && this.mixedChunk;
    const extend = batch > 0 && !mixed;
    if (!extend) {
      // Speculation (never with mixed chunk): a decoding request verifies up to K drafts, no more
      // than its remaining output can use; a request whose prefill finished in this pass has none.
      const limit = this.draftLimit;
      for (let i = 0; i < running.length; i++) {
        const s = running[i];
        if (limit > 0 && i < decoding) s.drafts = Math.max(0, Math.min(limit, s.maxOutput - s.generated - 1));
        decodeSet.push(s);
      }
    }
    return extend;
  }

  /** What the pass left queued (the FPM's queued requests). */
  private recordQueued(stats: PassStats): void {
    stats.numQueuedPrefill = this.waiting.length;
    let queuedTokens = 0;
    let queuedSq = 0;
    for (let i = 0; i < this.waiting.length; i++) {
      const len = this.waiting.at(i).length;
      queuedTokens += len;
      queuedSq += len * len;
    }
    stats.sumQueuedPrefillTokens = queuedTokens;
    stats.sumQueuedPrefillTokensSq = queuedSq;
    stats.numQueuedDecode = this.remoteReady.length;
    stats.sumQueuedDecodeKvTokens = 0;
    stats.sumQueuedDecodeKvTokensSq = 0;
  }

  /**
   * The batch after the pass's decode step: the running set (in an extend pass the running
   * requests that waited, then the newly prefilled), retracted requests back at the waiting front,
   * and the new_token_ratio (reset by a retraction, then one decay step). Returns whether a
   * request was retracted.
   */
  private settleBatch(extend: boolean): boolean {
    const running = this.running;
    const decodeSet = this.decodeSet;
    // Those still decoding: in an extend pass the newly prefilled join the waiting running set.
    if (extend) {
      for (let i = 0; i < decodeSet.length; i++) running.push(decodeSet[i]);
    } else {
      running.length = 0;
      for (let i = 0; i < decodeSet.length; i++) running.push(decodeSet[i]);
    }
    const retracted = this.retracted;
    const any = retracted.length > 0;
    for (let i = retracted.length - 1; i >= 0; i--) this.waiting.pushFront(retracted[i]);
    if (any) this.newTokenRatio = this.initRatio;
    retracted.length = 0;
    this.newTokenRatio = Math.max(this.minRatio, this.newTokenRatio - this.decayStep);
    return any;
  }

  /** The duration of the pass formed (`batch` prefill requests; `stats` holds the rest), from the timing model. */
  private passDurationMs(batch: number): number {
    const cfg = this.config;
    const stats = this.stats;
    const decodeBatch = cfg.role === "prefill" ? 0 : stats.numDecodeRequests;
    const totalKv = cfg.numGpuBlocks * this.page;
    const kvTokens = stats.sumDecodeKvTokens;
    const pass = this.passShape
      .setPrefillSums(batch, this.prefillIslSum, stats.sumPrefillKvTokens)
      .setDecode(
        decodeBatch,
        Math.min(kvTokens, totalKv),
        decodeBatch > 0 ? Math.floor(kvTokens / decodeBatch) : 0,
        totalKv,
      )
      // The sequences that verified drafts and the drafts they verified (counted as emitted).
      .setDrafts(stats.specDrafts, stats.specDraftTokens);
    return pricePass(this.timing, pass);
  }

  /**
   * `get_new_batch_prefill`: admits waiting heads into `canRun` under the three budgets, stopping
   * at the first that does not fit. Leaves the batch's Σ chunk end in `prefillIslSum` and its Σ
   * cached prefix in `stats`; returns whether an allocation failed.
   */
  private admitPrefillBatch(now: number, canRun: Sequence[]): boolean {
    const cfg = this.config;
    const sg = cfg.sglang;
    const page = this.page;
    const cache = this.cache;
    // Mixed chunk: the running requests' decode tokens share the pass (PrefillAdder's
    // mixed_with_decode_tokens comes off the total, input and chunk budgets).
    const mixedDecode = this.mixedChunk ? this.running.length : 0;
    let remTotal = this.prefillTotalBudget() - mixedDecode;
    let remInput = sg.maxPrefillTokens - mixedDecode;
    let remChunk = sg.chunkedPrefillSize - mixedDecode;
    const slots = cfg.maxSequences - this.running.length;
    let isl = 0;
    let prefix = 0;
    let oom = false;
    while (canRun.length < slots && this.waiting.length > 0) {
      const s = this.waiting.front();
      if (s.queuedAfterPass >= this.visibleBelow) break;
      const m = s.numComputed;
      if (m === 0 && this.rejects(s)) {
        this.waiting.popFront();
        this.signal(s.req, Signal.Rejected);
        continue;
      }
      // SGLang's `init_next_round_input`: a fresh request matches its prefix in the radix tree
      // before it is chunked, so what it extends, and what the budgets are charged, is what it
      // computes; a chunked continuation goes on from its own tokens.
      const start = m > 0 || !cfg.prefixCaching ? m : this.cachedPrefixPages(s) * page;
      const extendLen = s.length - start;
      // Only a zero-output request's fresh prompt can be all cached (`cachedPrefixPages` stops a
      // page short otherwise): it is admitted, to complete.
      if (extendLen <= 0 && m > 0) break;
      const chunk = this.chunkOf(extendLen, remChunk);
      if (chunk <= 0 && extendLen > 0) break;
      const charged = Math.ceil(chunk / page) * page;
      const outputReserve = chunk < extendLen ? 0 : Math.min(s.maxOutput - s.generated, sg.clipMaxNewTokens);
      // max_prefill_tokens bounds a batch, not its first request (as SGLang's PrefillAdder: a
      // prompt over it would otherwise never be admitted).
      const overInput = charged > remInput && canRun.length > 0;
      if (charged + outputReserve >= remTotal || overInput || charged > remChunk) {
        // On an empty worker a fresh head that still does not fit the whole cache with its output
        // reservation never will: rejected rather than left to stall the worker.
        if (m === 0 && canRun.length === 0 && this.running.length === 0 && cache.activeBlocks === 0) {
          if (charged + outputReserve >= remTotal) {
            this.waiting.popFront();
            this.signal(s.req, Signal.Rejected);
            continue;
          }
        }
        break;
      }
      const chunkEnd = start + chunk;
      const allocatedBefore = this.allocatedTokens(s);
      const cached = this.allocateChunk(s, chunkEnd, now, start / page);
      if (cached < 0) {
        oom = true;
        break;
      }
      this.waiting.popFront();
      const computed = chunkEnd - cached;
      this.stats.sumPrefillTokens += computed;
      this.stats.sumPrefillTokensSq += computed * computed;
      s.numComputed = chunkEnd;
      isl += chunkEnd;
      prefix += cached;
      remTotal -= this.allocatedTokens(s) - allocatedBefore + outputReserve;
      remInput -= charged;
      remChunk -= charged;
      canRun.push(s);
      if (remChunk <= 0) break;
    }
    this.prefillIslSum = isl;
    this.stats.sumPrefillKvTokens = prefix;
    return oom;
  }

  /**
   * What a request extending `extendLen` tokens computes in this pass: all of it, or, when that
   * does not fit the remaining chunk budget, the budget's whole pages (`PrefillAdder.add_one_req`;
   * with mixed chunk the budget is less the running requests' decode tokens). 0: nothing fits.
   */
  private chunkOf(extendLen: number, remChunk: number): number {
    const page = this.page;
    if (Math.ceil(extendLen / page) * page <= remChunk) return extendLen;
    return Math.min(Math.floor(remChunk / page) * page, extendLen);
  }

  /**
   * `rem_total` before the batch: free + evictable tokens, less the page-rounding slack of the
   * running and waiting requests' pages and each running request's expected output
   * (`min(remaining, clip) × new_token_ratio`).
   */
  private prefillTotalBudget(): number {
    const page = this.page;
    const cache = this.cache;
    const clip = this.config.sglang.clipMaxNewTokens;
    const ratio = this.newTokenRatio;
    let reservedOutput = 0;
    let slack = 0;
    for (let i = 0; i < this.running.length; i++) {
      const s = this.running[i];
      reservedOutput += Math.min(s.maxOutput - s.generated, clip) * ratio;
      slack += this.allocatedTokens(s) - s.numComputed;
    }
    for (let i = 0; i < this.waiting.length; i++) {
      const s = this.waiting.at(i);
      slack += this.allocatedTokens(s) - s.numComputed;
    }
    return Math.max(0, (cache.freePages + cache.evictablePages) * page - slack) - reservedOutput;
  }

  /**
   * Takes the KV of `s`'s next chunk, up to `chunkEnd` tokens: a fresh (or retracted) request
   * reuses its cached prefix (`matchPages`, as admission matched it without touching it: a head
   * that is then refused moves nothing in the LRU), locks it and allocates the rest (and is
   * admitted); a partial one allocates the pages its chunk adds. Returns the tokens already in KV
   * before the chunk (its cached prefix, or the earlier chunks), or -1 when the pages could not be
   * allocated.
   */
  private allocateChunk(s: Sequence, chunkEnd: number, now: number, matchPages: number): number {
    const page = this.page;
    const cache = this.cache;
    const m = s.numComputed;
    if (m > 0) {
      const fresh = Math.ceil(chunkEnd / page) - s.kvTreePages - s.kvPrivatePages;
      if (fresh > 0 && !cache.allocate(fresh)) return -1;
      if (fresh > 0) s.kvPrivatePages += fresh;
      return m;
    }
    const prefixCaching = this.config.prefixCaching;
    const node = prefixCaching
      ? this.matchPrefix(s, Math.min(matchPages, Math.floor(chunkEnd / page)))
      : NO_NODE;
    const pages = prefixCaching ? cache.matchedPages : 0;
    if (node !== NO_NODE) cache.lock(node);
    const fresh = Math.ceil(chunkEnd / page) - pages;
    if (!cache.allocate(fresh)) {
      if (node !== NO_NODE) cache.unlock(node);
      return -1;
    }
    s.kvNode = node;
    s.kvTreePages = pages;
    s.kvPrivatePages = fresh;
    const cached = pages * page;
    s.admissions++;
    s.prefillTarget = s.length;
    this.observer.onAdmit(s.req, now, cached);
    return cached;
  }

  /**
   * Nothing runs and the waiting head cannot be admitted: partial prompts (a chunked prompt
   * waiting for its next chunk, or one that was retracted and readmitted ahead of it) may hold the
   * KV the head needs. The reference would stall here; fleetsim retracts the last such request
   * behind the head (its cached prefix stays in the tree), or, when only the head holds KV, rejects
   * the head, which can then never finish. Returns whether it did either.
   */
  private breakDeadlock(): boolean {
    const w = this.waiting;
    if (w.length === 0) return false;
    const holds = (s: Sequence) => s.kvNode !== NO_NODE || s.kvPrivatePages > 0;
    for (let i = w.length - 1; i >= 1; i--) {
      const s = w.at(i);
      if (!holds(s)) continue;
      this.abort(s);
      s.numComputed = 0;
      this.preemptions++;
      this.newTokenRatio = this.initRatio;
      return true;
    }
    const head = w.front();
    if (!holds(head) || this.cache.activeBlocks > head.kvTreePages + head.kvPrivatePages) return false;
    w.popFront();
    this.abort(head);
    this.signal(head.req, Signal.Rejected);
    return true;
  }

  /** A fresh request the engine never admits: prompt ≥ max_model_len, or larger than the whole pool. */
  private rejects(s: Sequence): boolean {
    const cfg = this.config;
    if (cfg.maxModelLen !== null && s.promptLength >= cfg.maxModelLen) return true;
    return s.admissions === 0 && Math.ceil(s.length / this.page) > cfg.numGpuBlocks;
  }

  /**
   * Decodes one token for every request of `set` (compacted in place to those still decoding), or
   * a speculative burst for one with drafts: zero-output requests complete first, then retraction
   * makes room for the page growth (not in an extend pass, `extend`), then the tokens. Retracted
   * requests go to `this.retracted`, the decode batch and its KV tokens to `stats`; returns the
   * requests it finished.
   */
  private decodeStep(set: Sequence[], extend: boolean): number {
    let finishing = this.completeZeroOutput(set);
    if (extend) {
      // An extend pass is a pure prefill forward: it never retracts (the reference's
      // `prefill_first_tokens`). When the first tokens' slots do not fit the free and evictable
      // pages, the requests keep their first token for the next decode step, whose retraction
      // check makes room; retracting here could retract the request just prefilled, pass after
      // pass, while the running ones never decode.
      const cache = this.cache;
      if ((cache.freePages + cache.evictablePages) * this.page < this.growthTokens(set)) {
        this.stats.numDecodeRequests = 0;
        this.stats.sumDecodeKvTokens = 0;
        return finishing;
      }
    } else finishing += this.retractForGrowth(set);
    // The pass's decode half, as the pass is priced and its forward-pass metrics report it: the
    // requests that were decoding before it. A request whose prefill completed in this pass gets
    // its first token from the prefill forward itself, at no decode cost (SGLang samples it from
    // the extend batch's last logits; `ai-dynamo/aisimulate@047b934:crates/core/src/engine/scheduler/sglang/core.rs`,
    // `simulate_prefill_first_tokens`, schedules no decode in a prefill pass).
    let decoding = 0;
    let kvTokens = 0;
    for (let i = 0; i < set.length; i++) {
      if (set[i].prefillDonePass === this.passSerial) continue;
      decoding++;
      kvTokens += set[i].length;
    }
    this.stats.numDecodeRequests = decoding;
    this.stats.sumDecodeKvTokens = kvTokens;
    // Speculating: the pages of every request's real token and drafts are taken before any burst
    // is emitted (the reference reserves the batch's decode pages up front), so what a burst's
    // rejected drafts give back is not reused within the pass.
    if (this.draftLimit > 0) {
      for (let i = 0; i < set.length; i++) this.takePages(set[i], set[i].length + 1 + set[i].drafts);
    }
    return finishing + this.emitDecodeTokens(set);
  }

  /** Zero-output requests of `set` complete without a token and leave it; returns how many. */
  private completeZeroOutput(set: Sequence[]): number {
    let finishing = 0;
    let write = 0;
    for (let i = 0; i < set.length; i++) {
      const s = set[i];
      if (s.generated >= s.maxOutput) {
        finishing++;
        this.signal(s.req, Signal.Complete);
        this.finishInPass(s);
        continue;
      }
      set[write++] = s;
    }
    set.length = write;
    return finishing;
  }

  /**
   * Retracts the request of `set` with the fewest output tokens while the set's page growth does
   * not fit the free + evictable pages; returns the requests it finished (a lone request rejected).
   */
  private retractForGrowth(set: Sequence[]): number {
    const page = this.page;
    const cache = this.cache;
    const retracted = this.retracted;
    for (;;) {
      const available = (cache.freePages + cache.evictablePages) * page;
      if (available >= this.growthTokens(set) || set.length === 0) return 0;
      if (set.length === 1 && cache.activeBlocks <= set[0].kvTreePages + set[0].kvPrivatePages) {
        // A lone request whose context outgrew the whole cache can never run: reject it rather
        // than stall (the reference stalls here).
        const s = set.pop()!;
        s.drafts = 0;
        this.abort(s);
        this.signal(s.req, Signal.Rejected);
        return 1;
      }
      // (A lone request that others' KV crowds out is retracted too: it returns when they free it.)
      let victim = 0;
      for (let i = 1; i < set.length; i++) if (set[i].generated < set[victim].generated) victim = i;
      const s = set.splice(victim, 1)[0];
      s.drafts = 0;
      this.abort(s);
      s.numComputed = 0;
      this.preemptions++;
      retracted.push(s);
    }
  }

  /**
   * The tokens of the decode batch `set` (compacted in place to those still decoding): each
   * request's new token (its KV slot taken now), or its burst when it verified drafts; returns the
   * requests it finished.
   */
  private emitDecodeTokens(set: Sequence[]): number {
    let finishing = 0;
    let write = 0;
    for (let i = 0; i < set.length; i++) {
      const s = set[i];
      // The new token's KV slot is taken now; a full last page means a new page.
      this.takePages(s, s.length + 1);
      const drafts = s.drafts;
      let tokens = 1;
      if (drafts > 0) {
        s.drafts = 0;
        tokens = this.sampler!.burst(s.req, s.generated, drafts);
        this.stats.specDrafts++;
        this.stats.specDraftTokens += drafts;
        this.stats.specTokens += tokens;
        for (let k = 1; k < tokens; k++) this.signal(s.req, Signal.Token);
      }
      s.generated += tokens;
      s.numComputed = s.length;
      if (s.generated >= s.maxOutput) {
        finishing++;
        if (this.config.role === "prefill") {
          this.signal(s.req, Signal.PrefillDone);
          this.held.set(s.req, s);
        } else {
          this.signal(s.req, Signal.TokenAndComplete);
          this.finishInPass(s);
        }
        continue;
      }
      this.signal(s.req, Signal.Token);
      // Rejected drafts: their pages (past the emitted tokens) were taken for them only.
      if (drafts > 0) this.freePagesPast(s);
      this.cacheMaterialized(s);
      set[write++] = s;
    }
    set.length = write;
    return finishing;
  }

  /** Allocates private pages of `s` until `tokens` positions are covered (retraction made room). */
  private takePages(s: Sequence, tokens: number): void {
    const need = Math.ceil(tokens / this.page) - s.kvTreePages - s.kvPrivatePages;
    if (need <= 0) return;
    if (!this.cache.allocate(need))
      throw new Error("internal: SGLang decode page growth did not fit after retraction");
    s.kvPrivatePages += need;
  }

  /** Frees the private pages of `s` past its materialized tokens (a burst's rejected drafts). */
  private freePagesPast(s: Sequence): void {
    const extra = s.kvTreePages + s.kvPrivatePages - Math.ceil(s.numComputed / this.page);
    if (extra <= 0) return;
    this.cache.free(extra);
    s.kvPrivatePages -= extra;
  }

  /** Tokens of new pages the set needs for one more token each, or its token and drafts when speculating. */
  private growthTokens(set: readonly Sequence[]): number {
    const page = this.page;
    let need = 0;
    for (let i = 0; i < set.length; i++) {
      const s = set[i];
      need += Math.max(0, Math.ceil((s.length + 1 + s.drafts) / page) * page - this.allocatedTokens(s));
    }
    return need;
  }

  private allocatedTokens(s: Sequence): number {
    return (s.kvTreePages + s.kvPrivatePages) * this.page;
  }

  /**
   * Inserts the page-aligned materialized tokens of `s` past its cached prefix into the tree (its
   * private pages become cached pages; a page another request cached meanwhile is shared and the
   * private copy freed) and moves its lock to the new deepest node.
   */
  private cacheMaterialized(s: Sequence): void {
    if (!this.config.prefixCaching) return;
    const pages = Math.floor(s.numComputed / this.page);
    if (pages <= s.kvTreePages) return;
    const cache = this.cache;
    const old = s.kvNode;
    let node = old;
    for (let k = s.kvTreePages; k < pages; k++) {
      const h = this.hashOf(s, k);
      const existing = cache.child(node, h);
      if (existing !== NO_NODE) {
        cache.free(1);
        node = existing;
      } else {
        node = cache.insert(node, h);
      }
      s.kvPrivatePages--;
    }
    cache.lock(node);
    if (old !== NO_NODE) cache.unlock(old);
    s.kvNode = node;
    s.kvTreePages = pages;
  }

  /** Completion: the page-aligned context is cached, the partial page freed, the prefix unlocked. */
  private finish(s: Sequence): void {
    this.cacheMaterialized(s);
    this.abort(s);
  }

  /** `finish` within a pass: what it frees counts as freed at the pass end. */
  private finishInPass(s: Sequence): void {
    const before = this.cache.activeBlocks;
    this.finish(s);
    this.freedByFinishing += before - this.cache.activeBlocks;
  }

  /** Frees `s`'s private pages and unlocks its prefix (the tree keeps what it cached). */
  private abort(s: Sequence): void {
    if (s.kvPrivatePages > 0) this.cache.free(s.kvPrivatePages);
    if (s.kvNode !== NO_NODE) this.cache.unlock(s.kvNode);
    s.kvNode = NO_NODE;
    s.kvTreePages = 0;
    s.kvPrivatePages = 0;
  }

  /** Matches `s`'s first `limit` full pages (touching them); `cache.matchedPages` gets the length. */
  private matchPrefix(s: Sequence, limit: number, touch = true): number {
    const known = Math.min(limit, s.promptFullBlocks + s.outputHashes.length);
    const cache = this.cache;
    let node = NO_NODE;
    let k = 0;
    // Prompt pages straight from the request table, output pages from the sequence.
    const promptPages = Math.min(known, s.promptFullBlocks);
    node = cache.match(s.promptHashes, s.promptHashOffset, promptPages, touch);
    k = cache.matchedPages;
    if (k === promptPages) {
      while (k < known) {
        const c = cache.child(node, s.outputHashes[k - s.promptFullBlocks]);
        if (c === NO_NODE) break;
        node = c;
        k++;
      }
    }
    cache.matchedPages = k;
    return node;
  }

  /**
   * Pages of `s`'s context cached in the radix tree, looked up without touching them, no further
   * than `input_len - 1` tokens while it owes output (`Req.init_next_round_input`).
   */
  private cachedPrefixPages(s: Sequence): number {
    const matchable = s.generated < s.maxOutput ? s.length - 1 : s.length;
    this.matchPrefix(s, Math.floor(matchable / this.page), false);
    return this.cache.matchedPages;
  }

  /**
   * LPM (`ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`): with at most 128 waiting, requests are ordered by (deprioritized first
   * false, cached-prefix length descending), stable; a request is deprioritized when it matches at
   * most 32 cached tokens and its first ceil(32 / page) pages repeat an earlier waiting request's.
   */
  private orderLongestPrefixFirst(): void {
    const w = this.waiting;
    const n = w.length;
    if (n < 2 || n > LPM_FALLBACK_THRESHOLD) return;
    const dedupePages = Math.ceil(DEDUPE_TOKENS / this.page);
    const seen = new Set<number>();
    const items: { s: Sequence; match: number; low: boolean; i: number }[] = [];
    for (let i = 0; i < n; i++) {
      const s = w.at(i);
      const limit = Math.min(s.promptFullBlocks, Math.floor(s.length / this.page));
      this.cache.match(s.promptHashes, s.promptHashOffset, limit, false);
      const match = this.cache.matchedPages * this.page;
      let low = false;
      if (match <= DEDUPE_TOKENS && s.promptFullBlocks >= dedupePages) {
        const key = s.promptHashes[s.promptHashOffset + dedupePages - 1];
        if (seen.has(key)) low = true;
        else seen.add(key);
      }
      items.push({ s, match, low, i });
    }
    items.sort((a, b) => Number(a.low) - Number(b.low) || b.match - a.match || a.i - b.i);
    for (let i = 0; i < n; i++) w.popFront();
    for (const it of items) w.pushBack(it.s);
  }

  private hashOf(s: Sequence, k: number): number {
    if (k < s.promptFullBlocks) return s.promptHashes[s.promptHashOffset + k];
    const j = k - s.promptFullBlocks;
    while (s.outputHashes.length <= j) {
      const kk = s.promptFullBlocks + s.outputHashes.length;
      const parent = kk === 0 ? SEQUENCE_HASH_SEED : this.hashOf(s, kk - 1);
      s.outputHashes.push(outputBlockHash(parent, s.req, kk));
    }
    return s.outputHashes[j];
  }

  releaseHeld(req: number): void {
    const s = takeEntry(this.held, req);
    if (s === undefined) throw new Error(`internal: no KV held for request ${req}`);
    this.finish(s);
    this.events.flush();
  }

  cancel(req: number): boolean {
    const found = this.waiting.remove(req) ?? this.remoteReady.remove(req);
    if (found !== null) {
      this.abort(found);
      return true;
    }
    const i = this.running.findIndex((s) => s.req === req);
    if (i >= 0) {
      this.abort(this.running.splice(i, 1)[0]);
      return true;
    }
    const h = takeEntry(this.held, req);
    if (h === undefined) return false;
    this.abort(h);
    return true;
  }

  /**
   * Decode role: reserves the page-rounded prompt for a hand-off (SGLang's destination footprint,
   * without prefix reuse: `ai-dynamo/dynamo@4c3ac77:lib/mocker/src/common/utils.rs`). Returns 0 resident tokens, or -1 when it does not fit now.
   */
  tryReserve(s: Sequence): number {
    if (this.reserved + this.running.length >= this.config.maxSequences) return -1;
    s.completePromptHashes();
    const pages = Math.ceil(s.promptLength / this.page);
    if (!this.cache.allocate(pages)) return -1;
    this.events.flush();
    s.kvPrivatePages = pages;
    this.reserved++;
    s.residentTokens = 0;
    return 0;
  }

  activate(s: Sequence): void {
    this.reserved--;
    s.numComputed = s.promptLength;
    s.prefillTarget = s.promptLength;
    // Its prefill ran on another worker (whose pass serials are not this one's): it decodes here.
    s.prefillDonePass = 0;
    // The prompt's pages enter the tree only now (no destination events before activation).
    this.cacheMaterialized(s);
    this.events.flush();
    this.remoteReady.pushBack(s);
  }

  cancelReservation(s: Sequence): void {
    if (this.reserved <= 0) throw new Error(`internal: no reservation to cancel for request ${s.req}`);
    this.reserved--;
    this.abort(s);
  }

  auditKv(reservedElsewhere: readonly Sequence[]): string | null {
    const locked: number[] = [];
    let privatePages = 0;
    let problem: string | null = null;
    const own = (s: Sequence, where: string): void => {
      if (s.kvNode !== NO_NODE) locked.push(s.kvNode);
      privatePages += s.kvPrivatePages;
      if (problem === null && s.numComputed > this.allocatedTokens(s)) {
        problem = `request ${s.req} (${where}) materialized ${s.numComputed} tokens in ${this.allocatedTokens(s)} allocated`;
      }
      // Between passes a running request holds exactly its materialized tokens' pages: a
      // speculative burst's rejected drafts gave theirs back.
      const pages = s.kvTreePages + s.kvPrivatePages;
      if (problem === null && where === "running" && pages > Math.ceil(s.numComputed / this.page)) {
        problem = `request ${s.req} (running) holds ${pages} pages for ${s.numComputed} materialized tokens`;
      }
    };
    for (const s of this.running) own(s, "running");
    for (let i = 0; i < this.waiting.length; i++) own(this.waiting.at(i), "waiting");
    for (let i = 0; i < this.remoteReady.length; i++) own(this.remoteReady.at(i), "arrived hand-off");
    for (const s of this.held.values()) own(s, "held");
    for (const s of reservedElsewhere) own(s, "reserved");
    if (reservedElsewhere.length !== this.reserved) {
      return `${this.reserved} reservations counted, ${reservedElsewhere.length} in flight`;
    }
    return problem ?? this.cache.audit(locked, privatePages);
  }
}
