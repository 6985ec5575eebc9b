/**
 * Hash → block map for the prefix cache, over the one block-hash table (util/blockHashTable.ts:
 * typed arrays, no allocation after construction). A `Map<number, number>` with 53-bit hash keys
 * stores boxed doubles and was the replay's hottest spot.
 */
import { BlockHashTable } from "../util/blockHashTable.js";

export class BlockHashIndex {
  private readonly table: BlockHashTable;

  /** `maxEntries`: the most keys ever held at once (the pool's block count): it never grows. */
  constructor(maxEntries: number) {
    this.table = new BlockHashTable(maxEntries * 2);
  }

  get size(): number {
    return this.table.size;
  }

  /** Value stored under `key`, or -1. */
  get(key: number): number {
    const i = this.table.find(key);
    return i < 0 ? -1 : this.table.payload[i];
  }

  has(key: number): boolean {
    return this.table.find(key) >= 0;
  }

  /** Inserts or replaces. */
  set(key: number, value: number): void {
    const i = this.table.insert(key);
    this.table.payload[i] = value;
  }

  /** Stores `value` under `key` unless `key` is present (one probe); true when it stored. */
  setIfAbsent(key: number, value: number): boolean {
    const table = this.table;
    const before = table.size;
    const i = table.insert(key);
    if (table.size === before) return false;
    table.payload[i] = value;
    return true;
  }

  /** Removes `key` if present. */
  delete(key: number): void {
    const i = this.table.find(key);
    if (i >= 0) this.table.deleteAt(i);
  }
}
