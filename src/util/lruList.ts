/**
 * An intrusive doubly-linked LRU list over slot ids `0 .. capacity−1` (typed arrays, no allocation
 * after construction): the oldest entry at the head, the newest at the tail. The KV block pool's
 * inactive list and the host KV tier both keep one.
 */
export class LruList {
  private readonly prev: Int32Array;
  private readonly nextOf: Int32Array;
  /** Oldest entry, or −1 when empty. */
  head = -1;
  private tail = -1;
  /** Entries on the list. */
  size = 0;

  constructor(capacity: number) {
    this.prev = new Int32Array(capacity).fill(-1);
    this.nextOf = new Int32Array(capacity).fill(-1);
  }

  /** Appends `slot` (not on the list) as the newest entry. */
  pushTail(slot: number): void {
    this.prev[slot] = this.tail;
    this.nextOf[slot] = -1;
    if (this.tail >= 0) this.nextOf[this.tail] = slot;
    else this.head = slot;
    this.tail = slot;
    this.size++;
  }

  /** Takes `slot` (on the list) off it. */
  remove(slot: number): void {
    const prev = this.prev[slot];
    const next = this.nextOf[slot];
    if (prev >= 0) this.nextOf[prev] = next;
    else this.head = next;
    if (next >= 0) this.prev[next] = prev;
    else this.tail = prev;
    this.prev[slot] = -1;
    this.nextOf[slot] = -1;
    this.size--;
  }

  /** The entry after `slot` (newer), or −1. */
  next(slot: number): number {
    return this.nextOf[slot];
  }
}
