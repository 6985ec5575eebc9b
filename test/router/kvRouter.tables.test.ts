import { describe, expect, it } from "vitest";
import { HashCounter } from "../../src/router/hashCounter.js";
import { HashSlotSets } from "../../src/router/hashSlotSets.js";
import { Prng } from "../../src/util/prng.js";

/** Keys from a small pool so that inserts, repeats and deletes collide often; some above 2^32. */
function keyPool(prng: Prng, size: number): number[] {
  return Array.from({ length: size }, (_, i) =>
    i % 3 === 0 ? 2 ** 52 + prng.nextUint32() : i % 3 === 1 ? prng.nextUint32() : i,
  );
}

describe("HashSlotSets against a Map<hash, Set<slot>> model", () => {
  it("add / remove / clearSlot / growth (bitsets wider than one word)", () => {
    const prng = new Prng(11);
    const keys = keyPool(prng, 3000);
    const table = new HashSlotSets(8, 16);
    const model = new Map<number, Set<number>>();
    let slots = 8;
    for (let step = 0; step < 60_000; step++) {
      const key = keys[prng.nextIntInclusive(0, keys.length - 1)];
      const slot = prng.nextIntInclusive(0, slots - 1);
      const op = prng.nextUint32() % 100;
      if (op < 55) {
        const fresh = !(model.get(key)?.has(slot) ?? false);
        if (table.add(key, slot) !== fresh) throw new Error(`add(${key}, ${slot}) at step ${step}`);
        if (!model.has(key)) model.set(key, new Set());
        model.get(key)!.add(slot);
      } else if (op < 98) {
        const held = model.get(key)?.has(slot) ?? false;
        if (table.remove(key, slot) !== held) throw new Error(`remove(${key}, ${slot}) at step ${step}`);
        model.get(key)?.delete(slot);
        if (model.get(key)?.size === 0) model.delete(key);
      } else if (op < 99) {
        table.clearSlot(slot);
        for (const [k, set] of model) {
          set.delete(slot);
          if (set.size === 0) model.delete(k);
        }
      } else if (slots < 100) {
        slots += 13;
        table.ensureSlotCapacity(slots);
      }
    }
    expect(slots).toBeGreaterThan(32);
    expect(table.size).toBe(model.size);
    let mismatches = 0;
    for (const key of keys) {
      for (let s = 0; s < slots; s++)
        if (table.has(key, s) !== (model.get(key)?.has(s) ?? false)) mismatches++;
    }
    expect(mismatches).toBe(0);
  });

  it("leadingDepths equals a per-slot walk", () => {
    const prng = new Prng(5);
    const slots = 70;
    const table = new HashSlotSets(slots);
    const prompt = Float64Array.from({ length: 40 }, (_, i) => 2 ** 50 + i * 7919);
    // Each slot holds a random-length prefix, with a random hole sometimes.
    for (let s = 0; s < slots; s++) {
      const depth = prng.nextIntInclusive(0, prompt.length);
      for (let i = 0; i < depth; i++) table.add(prompt[i], s);
      if (depth > 2 && s % 4 === 0) table.remove(prompt[1], s);
    }
    const candidates = Int32Array.from({ length: slots }, (_, i) => i).filter((s) => s % 5 !== 2);
    const out = new Int32Array(slots).fill(-7);
    table.leadingDepths(prompt, 0, prompt.length, candidates, candidates.length, out, new Int32Array(3));
    for (let s = 0; s < slots; s++) {
      if (s % 5 === 2) {
        expect(out[s]).toBe(-7); // not a candidate: untouched
        continue;
      }
      let d = 0;
      while (d < prompt.length && table.has(prompt[d], s)) d++;
      expect(out[s]).toBe(d);
    }
  });
});

describe("HashCounter against a Map model", () => {
  it("increment / decrement / growth", () => {
    const prng = new Prng(3);
    const keys = keyPool(prng, 2000);
    const counter = new HashCounter(4);
    const model = new Map<number, number>();
    for (let step = 0; step < 50_000; step++) {
      const key = keys[prng.nextIntInclusive(0, keys.length - 1)];
      if (prng.nextUint32() % 100 < 55) {
        const next = (model.get(key) ?? 0) + 1;
        model.set(key, next);
        if (counter.increment(key) !== next) throw new Error(`increment(${key}) at step ${step}`);
      } else {
        const had = model.get(key);
        const left = counter.decrement(key);
        if (left !== (had === undefined ? -1 : had - 1)) throw new Error(`decrement(${key}) at step ${step}`);
        if (had !== undefined) {
          if (had === 1) model.delete(key);
          else model.set(key, had - 1);
        }
      }
    }
    expect(counter.size).toBe(model.size);
    for (const key of keys) expect(counter.get(key)).toBe(model.get(key) ?? 0);
  });
});
