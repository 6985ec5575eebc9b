import type { Sequence } from "./sequence.js";

const NO_ITEMS: (Sequence | null)[] = [];

/**
 * FIFO of sequences with O(1) push at either end (preempted requests go back to the front).
 * A power-of-two ring buffer; grows by doubling.
 */
export class SequenceQueue {
  private items: (Sequence | null)[] = NO_ITEMS;
  private head = 0;
  private n = 0;

  constructor() {
    // Set twice, so that V8 sees a mutable field from the first queue on: a queue's first `grow`,
    // late in a replay, would otherwise throw away the compiled code that read `items` as a
    // constant (the engine's admission path; docs/performance.md "Field states").
    this.items = new Array<Sequence | null>(16).fill(null);
  }

  get length(): number {
    return this.n;
  }

  front(): Sequence {
    return this.items[this.head]!;
  }

  /** The i-th sequence from the front. */
  at(i: number): Sequence {
    return this.items[(this.head + i) & (this.items.length - 1)]!;
  }

  pushBack(s: Sequence): void {
    if (this.n === this.items.length) this.grow();
    this.items[(this.head + this.n) & (this.items.length - 1)] = s;
    this.n++;
  }

  pushFront(s: Sequence): void {
    if (this.n === this.items.length) this.grow();
    this.head = (this.head - 1) & (this.items.length - 1);
    this.items[this.head] = s;
    this.n++;
  }

  popFront(): Sequence {
    const s = this.items[this.head]!;
    this.items[this.head] = null;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.n--;
    return s;
  }

  /** Removes and returns the i-th sequence from the front, keeping the others' order (O(n)). */
  removeAt(i: number): Sequence {
    const mask = this.items.length - 1;
    const s = this.items[(this.head + i) & mask]!;
    for (let k = i; k < this.n - 1; k++)
      this.items[(this.head + k) & mask] = this.items[(this.head + k + 1) & mask];
    this.items[(this.head + this.n - 1) & mask] = null;
    this.n--;
    return s;
  }

  /** Removes and returns the sequence of request row `req`, keeping the others' order; null when it is not here. */
  remove(req: number): Sequence | null {
    for (let i = 0; i < this.n; i++) if (this.at(i).req === req) return this.removeAt(i);
    return null;
  }

  private grow(): void {
    const cap = this.items.length;
    const next = new Array<Sequence | null>(cap * 2).fill(null);
    for (let i = 0; i < this.n; i++) next[i] = this.items[(this.head + i) & (cap - 1)];
    this.items = next;
    this.head = 0;
  }
}
