/**
 * The one block-hash table against a Map model: inserts, deletes (backward shift, which moves
 * entries and their payload), growth, widening and dropping empty entries, with colliding keys
 * (a small table, keys above 2^32) so probe runs wrap around the end.
 */
import { describe, expect, it } from "vitest";
import { BlockHashTable } from "../../src/util/blockHashTable.js";
import { Prng } from "../../src/util/prng.js";

function payloadOf(table: BlockHashTable, key: number): number[] | null {
  const i = table.find(key);
  if (i < 0) return null;
  return Array.from(table.payload.subarray(i * table.stride, (i + 1) * table.stride));
}

describe("BlockHashTable against a Map model", () => {
  it("keeps every key's payload through inserts, deletes, growth and widening", () => {
    const prng = new Prng(5);
    const keys = Array.from({ length: 2000 }, (_, i) => (i % 2 === 0 ? 2 ** 52 + prng.nextUint32() : i));
    const table = new BlockHashTable(16, 2);
    const model = new Map<number, number[]>();
    let stride = 2;
    for (let step = 0; step < 40_000; step++) {
      const key = keys[prng.nextIntInclusive(0, keys.length - 1)];
      const op = prng.nextUint32() % 100;
      if (op < 60) {
        const i = table.insert(key);
        const word = prng.nextIntInclusive(0, stride - 1);
        table.payload[i * stride + word] = step + 1;
        const words = model.get(key) ?? new Array(stride).fill(0);
        words[word] = step + 1;
        model.set(key, words);
      } else if (op < 98) {
        const i = table.find(key);
        expect(i >= 0).toBe(model.has(key));
        if (i >= 0) table.deleteAt(i);
        model.delete(key);
      } else if (op < 99 && stride < 5) {
        stride++;
        table.widen(stride);
        for (const words of model.values()) words.push(0);
      } else {
        // Zero one word everywhere, then drop the entries left all zero.
        const word = prng.nextIntInclusive(0, stride - 1);
        for (let e = 0; e < table.keys.length; e++) table.payload[e * stride + word] = 0;
        table.dropEmpty();
        for (const [k, words] of model) {
          words[word] = 0;
          if (words.every((w) => w === 0)) model.delete(k);
        }
      }
      if (step % 997 === 0 || step === 39_999) {
        expect(table.size).toBe(model.size);
        for (const k of keys) expect(payloadOf(table, k)).toEqual(model.get(k) ?? null);
      }
    }
  });

  it("a new entry's payload is zero even where a deleted entry's was not", () => {
    const table = new BlockHashTable(16, 1);
    const a = table.insert(7);
    table.payload[a] = 42;
    table.deleteAt(a);
    expect(table.payload[table.insert(7)]).toBe(0);
  });
});
