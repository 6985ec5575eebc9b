/**
 * Block hash → reference count, for one worker's live requests: a block stays active on the
 * worker while any live request there contains it. A view over the one block-hash table
 * (util/blockHashTable.ts), so the per-block bookkeeping of addRequest/free does not box keys.
 */
import { BlockHashTable } from "../util/blockHashTable.js";

export class HashCounter {
  private readonly table: BlockHashTable;

  constructor(initialCapacity = 64) {
    this.table = new BlockHashTable(initialCapacity);
  }

  /** Distinct keys with a positive count. */
  get size(): number {
    return this.table.size;
  }

  get(key: number): number {
    const i = this.table.find(key);
    return i < 0 ? 0 : this.table.payload[i];
  }

  /** Adds one reference; returns the new count (1 = the key just became present). */
  increment(key: number): number {
    const i = this.table.insert(key);
    return ++this.table.payload[i];
  }

  /** Drops one reference; returns the new count (0 = the key just left), or -1 when it was absent. */
  decrement(key: number): number {
    const table = this.table;
    const i = table.find(key);
    if (i < 0) return -1;
    const left = --table.payload[i];
    if (left === 0) table.deleteAt(i);
    return left;
  }
}
