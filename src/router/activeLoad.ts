/**
 * The load the router has placed on each worker slot, from `addRequest` until `free`
 * (Dynamo `ActiveSequencesMultiWorker`; `ai-dynamo/dynamo@cfa2254:lib/kv-router/src/protocols.rs` active load):
 *
 * - prefill: each request's uncached prompt tokens, in a {@link PrefillBacklog} per slot, until
 *   `markPrefillCompleted` (or `free`, which implies it);
 * - decode: the request's full prompt blocks. With `assumeKvReuse` they are identified by their
 *   sequence hashes and a block counts once per worker however many live requests share it (a
 *   reference count per slot, plus a hash → slots presence table so one walk finds, for every
 *   candidate at once, how many of a new request's blocks are already live). Without it every
 *   request's blocks are its own (Dynamo gives them random hashes), so only counts are kept.
 *
 * Request ids are the caller's integer row ids; each may be live at most once.
 */

import { HashCounter } from "./hashCounter.js";
import { HashSlotSets } from "./hashSlotSets.js";
import { PrefillBacklog } from "./prefillBacklog.js";

class LiveRequest {
  constructor(
    readonly slot: number,
    /** Full prompt blocks counted as decode load. */
    readonly blocks: number,
    /** Their sequence hashes (a private copy), only when blocks are deduplicated. */
    readonly hashes: Float64Array | null,
  ) {}
}

export class ActiveLoad {
  /** hash → slots with the block in a live request; null unless deduplicating. */
  readonly livePresence: HashSlotSets | null;
  private readonly requests = new Map<number, LiveRequest>();
  private readonly prefill: PrefillBacklog[] = [];
  private readonly blockRefs: (HashCounter | null)[] = [];
  private readonly blockCount: number[] = [];
  private readonly liveCount: number[] = [];

  constructor(
    private readonly trackActiveBlocks: boolean,
    private readonly trackPrefillTokens: boolean,
    assumeKvReuse: boolean,
  ) {
    this.livePresence = trackActiveBlocks && assumeKvReuse ? new HashSlotSets() : null;
  }

  /** Makes slots `0 .. slots-1` usable. */
  ensureSlots(slots: number): void {
    while (this.prefill.length < slots) {
      this.prefill.push(new PrefillBacklog());
      this.blockRefs.push(null);
      this.blockCount.push(0);
      this.liveCount.push(0);
    }
    this.livePresence?.ensureSlotCapacity(slots);
  }

  /** Slot of a live request, or -1. */
  slotOf(request: number): number {
    return this.requests.get(request)?.slot ?? -1;
  }

  liveRequests(slot: number): number {
    return this.liveCount[slot];
  }

  /** Unique decode blocks live on the slot. */
  activeBlocks(slot: number): number {
    return this.blockCount[slot];
  }

  activePrefillTokens(slot: number, nowMs: number): number {
    return this.prefill[slot].activeTokens(nowMs);
  }

  /**
   * Registers a routed request.
   * @param prefillTokens uncached prompt tokens (not tracked when ≤ 0, as in the reference)
   * @param expectedPrefillMs predicted prefill duration, NaN for none
   */
  add(
    slot: number,
    request: number,
    hashes: Float64Array,
    offset: number,
    count: number,
    prefillTokens: number,
    expectedPrefillMs: number,
    nowMs: number,
  ): void {
    if (this.requests.has(request)) throw new Error(`kv router: request ${request} is already live`);
    if (this.trackPrefillTokens && prefillTokens > 0) {
      this.prefill[slot].add(request, prefillTokens, expectedPrefillMs, nowMs);
    }
    let copy: Float64Array | null = null;
    let blocks = 0;
    if (this.trackActiveBlocks) {
      blocks = count;
      if (this.livePresence !== null) {
        copy = hashes.slice(offset, offset + count);
        let refs = this.blockRefs[slot];
        if (refs === null) {
          refs = new HashCounter();
          this.blockRefs[slot] = refs;
        }
        for (let i = 0; i < count; i++) {
          if (refs.increment(copy[i]) === 1) {
            this.livePresence.add(copy[i], slot);
            this.blockCount[slot]++;
          }
        }
      } else {
        this.blockCount[slot] += count;
      }
    }
    this.requests.set(request, new LiveRequest(slot, blocks, copy));
    this.liveCount[slot]++;
  }

  /** Prompt tokens of `request` stop counting as prefill. Returns its slot, or -1 for an unknown request. */
  markPrefillCompleted(request: number, nowMs: number): number {
    const live = this.requests.get(request);
    if (live === undefined) return -1;
    this.prefill[live.slot].remove(request, nowMs);
    return live.slot;
  }

  /** Releases everything `request` held. Returns its slot, or -1 for an unknown request. */
  free(request: number, nowMs: number): number {
    const live = this.requests.get(request);
    if (live === undefined) return -1;
    const slot = live.slot;
    this.prefill[slot].remove(request, nowMs);
    if (live.hashes !== null) {
      const refs = this.blockRefs[slot]!;
      for (let i = 0; i < live.hashes.length; i++) {
        if (refs.decrement(live.hashes[i]) === 0) {
          this.livePresence!.remove(live.hashes[i], slot);
          this.blockCount[slot]--;
        }
      }
    } else {
      this.blockCount[slot] -= live.blocks;
    }
    this.requests.delete(request);
    this.liveCount[slot]--;
    return slot;
  }

  /** Called when a slot is handed to another worker: it must hold no live request. */
  resetSlot(slot: number): void {
    if (this.liveCount[slot] !== 0)
      throw new Error(`internal: kv router slot ${slot} still has live requests`);
    this.prefill[slot] = new PrefillBacklog();
    this.blockRefs[slot] = null;
    this.blockCount[slot] = 0;
  }
}
