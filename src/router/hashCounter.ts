/**
 * Block hash → reference count, for one worker's live requests: a block stays active on the
 * worker while any live request there contains it. Open addressing with linear probing and
 * backward-shift deletion over typed arrays (keys: non-negative 53-bit hashes, -1 = empty), so
 * the per-block bookkeeping of addRequest/free does not box keys. Grows by doubling.
 */

import { mixBlockHash } from "./blockHashMix.js";

const EMPTY = -1;

export class HashCounter {
  private keys: Float64Array;
  private counts: Int32Array;
  private mask: number;
  private count = 0;

  constructor(initialCapacity = 64) {
    let size = 16;
    while (size < initialCapacity) size *= 2;
    this.keys = new Float64Array(size).fill(EMPTY);
    this.counts = new Int32Array(size);
    this.mask = size - 1;
  }

  /** Distinct keys with a positive count. */
  get size(): number {
    return this.count;
  }

  get(key: number): number {
    const i = this.find(key);
    return i < 0 ? 0 : this.counts[i];
  }

  /** Adds one reference; returns the new count (1 = the key just became present). */
  increment(key: number): number {
    if ((this.count + 1) * 2 > this.keys.length) this.grow();
    const keys = this.keys;
    let i = this.home(key);
    for (;;) {
      const k = keys[i];
      if (k === key) return ++this.counts[i];
      if (k === EMPTY) {
        keys[i] = key;
        this.counts[i] = 1;
        this.count++;
        return 1;
      }
      i = (i + 1) & this.mask;
    }
  }

  /** Drops one reference; returns the new count (0 = the key just left), or -1 when it was absent. */
  decrement(key: number): number {
    const i = this.find(key);
    if (i < 0) return -1;
    const left = --this.counts[i];
    if (left === 0) this.deleteAt(i);
    return left;
  }

  private find(key: number): number {
    const keys = this.keys;
    let i = this.home(key);
    for (;;) {
      const k = keys[i];
      if (k === key) return i;
      if (k === EMPTY) return -1;
      i = (i + 1) & this.mask;
    }
  }

  private home(key: number): number {
    return mixBlockHash(key) & this.mask;
  }

  private deleteAt(i: number): void {
    const keys = this.keys;
    const counts = this.counts;
    const mask = this.mask;
    this.count--;
    let hole = i;
    let j = i;
    for (;;) {
      j = (j + 1) & mask;
      const k = keys[j];
      if (k === EMPTY) break;
      const home = this.home(k);
      const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
      if (stays) continue;
      keys[hole] = k;
      counts[hole] = counts[j];
      hole = j;
    }
    keys[hole] = EMPTY;
    counts[hole] = 0;
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldCounts = this.counts;
    const size = oldKeys.length * 2;
    this.keys = new Float64Array(size).fill(EMPTY);
    this.counts = new Int32Array(size);
    this.mask = size - 1;
    for (let e = 0; e < oldKeys.length; e++) {
      const key = oldKeys[e];
      if (key === EMPTY) continue;
      let i = this.home(key);
      while (this.keys[i] !== EMPTY) i = (i + 1) & this.mask;
      this.keys[i] = key;
      this.counts[i] = oldCounts[e];
    }
  }
}
