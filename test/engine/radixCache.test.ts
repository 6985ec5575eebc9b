/** The SGLang radix cache (src/engine/radixCache.ts; the reference's radix_cache.rs tests). */
import { describe, expect, it } from "vitest";
import { NO_NODE, RadixCache } from "../../src/engine/radixCache.js";

/** Inserts the chain of page hashes `path` from the root (taking a free page per new node); returns the leaf. */
function insertPath(c: RadixCache, path: number[]): number {
  let node = NO_NODE;
  for (const h of path) {
    const existing = c.child(node, h);
    if (existing !== NO_NODE) {
      node = existing;
      continue;
    }
    expect(c.allocate(1)).toBe(true);
    node = c.insert(node, h);
  }
  return node;
}

describe("RadixCache", () => {
  it("matches the longest cached prefix and shares a common parent", () => {
    const c = new RadixCache(100);
    insertPath(c, [1, 2, 3, 4, 5]);
    insertPath(c, [1, 2, 3, 6, 7]);
    expect(c.treePages).toBe(7);
    c.match([1, 2, 3, 4, 5], 0, 5, false);
    expect(c.matchedPages).toBe(5);
    c.match([1, 2, 3, 9], 0, 4, false);
    expect(c.matchedPages).toBe(3);
    c.match([9], 0, 1, false);
    expect(c.matchedPages).toBe(0);
  });

  it("evicts unlocked leaves oldest first, a parent becoming a leaf in its turn, never locked ones", () => {
    const c = new RadixCache(6);
    const a = insertPath(c, [1, 2, 3]);
    c.tick();
    insertPath(c, [4, 5, 6]);
    expect(c.freePages).toBe(0);
    expect(c.evictablePages).toBe(6);
    // Three pages: the older chain goes, leaf first.
    expect(c.allocate(3)).toBe(true);
    c.match([1, 2, 3], 0, 3, false);
    expect(c.matchedPages).toBe(0);
    c.match([4, 5, 6], 0, 3, false);
    expect(c.matchedPages).toBe(3);
    c.free(3);
    // A locked chain is protected.
    const b = c.match([4, 5, 6], 0, 3, false);
    c.lock(b);
    expect(c.evictablePages).toBe(0);
    expect(c.allocate(4)).toBe(false);
    expect(c.activeBlocks).toBe(3);
    c.unlock(b);
    expect(c.activeBlocks).toBe(0);
    expect(a).not.toBe(NO_NODE);
  });

  it("touching a leaf makes it newer than an untouched one", () => {
    const c = new RadixCache(6);
    insertPath(c, [1, 2, 3]);
    c.tick();
    insertPath(c, [4, 5, 6]);
    c.tick();
    c.match([1, 2, 3], 0, 3, true);
    expect(c.allocate(3)).toBe(true);
    c.match([1, 2, 3], 0, 3, false);
    expect(c.matchedPages).toBe(3);
    c.match([4, 5, 6], 0, 3, false);
    expect(c.matchedPages).toBe(0);
  });

  it("ties in access time break by node id", () => {
    const c = new RadixCache(2);
    insertPath(c, [1]);
    insertPath(c, [2]);
    expect(c.allocate(1)).toBe(true);
    c.match([1], 0, 1, false);
    expect(c.matchedPages).toBe(0);
    c.match([2], 0, 1, false);
    expect(c.matchedPages).toBe(1);
  });

  it("reports Stored and Removed events and audits its lock counts", () => {
    const c = new RadixCache(2);
    const events: string[] = [];
    c.setListener({
      onBlockStored: (h) => events.push(`+${h}`),
      onBlockRemoved: (h) => events.push(`-${h}`),
    });
    const leaf = insertPath(c, [7, 8]);
    c.lock(leaf);
    expect(c.audit([leaf], 0)).toBeNull();
    expect(c.audit([], 0)).toMatch(/lock_ref 1, 0 requests hold it/);
    c.unlock(leaf);
    expect(c.allocate(2)).toBe(true);
    expect(events).toEqual(["+7", "+8", "-8", "-7"]);
    expect(c.audit([], 2)).toBeNull();
    expect(c.audit([], 1)).toMatch(/pages/);
  });
});
