import { describe, expect, it } from "vitest";
import { BoundedCache } from "../../src/util/boundedCache.js";

describe("BoundedCache", () => {
  it("builds a key's value once and returns it on every hit", () => {
    const cache = new BoundedCache<object>(2);
    let builds = 0;
    const build = (): object => ({ n: ++builds });
    const a = cache.get("a", build);
    expect(cache.get("a", build)).toBe(a);
    expect(builds).toBe(1);
    expect(cache.get("b", build)).not.toBe(a);
    expect(builds).toBe(2);
  });

  it("keeps at most `capacity` entries, dropping the least recently used", () => {
    const cache = new BoundedCache<string>(2);
    cache.get("a", () => "A");
    cache.get("b", () => "B");
    cache.get("a", () => "never"); // a is now the most recently used
    cache.get("c", () => "C");
    expect(cache.size).toBe(2);
    expect([cache.has("a"), cache.has("b"), cache.has("c")]).toEqual([true, false, true]);
    expect(cache.get("b", () => "B again")).toBe("B again");
    expect(cache.has("a")).toBe(false);
  });

  it("deleteIf removes an entry only while it still holds that value", () => {
    const cache = new BoundedCache<string>(1);
    cache.get("a", () => "A");
    cache.deleteIf("a", "other");
    expect(cache.has("a")).toBe(true);
    cache.deleteIf("a", "A");
    expect(cache.has("a")).toBe(false);
  });

  it("refuses a capacity that is not a positive integer", () => {
    expect(() => new BoundedCache(0)).toThrow(/positive integer/);
    expect(() => new BoundedCache(1.5)).toThrow(/positive integer/);
  });
});
