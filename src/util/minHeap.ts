/**
 * Min-heap of (time, order) keys with an integer payload: the replay's event heap
 * (sim/eventHeap.ts) and SGLang's evictable radix leaves (engine/radixCache.ts). Ties on time
 * break on `order`, so the pop order never depends on insertion luck. Storage is three parallel
 * typed arrays that grow by doubling; push/pop allocate nothing.
 */
export class MinHeap {
  private times: Float64Array;
  private orders: Float64Array;
  private payloads: Int32Array;
  private n = 0;

  constructor(initialCapacity = 1024) {
    const cap = Math.max(16, initialCapacity);
    this.times = new Float64Array(cap);
    this.orders = new Float64Array(cap);
    this.payloads = new Int32Array(cap);
  }

  get size(): number {
    return this.n;
  }

  /** Time of the earliest event; +Infinity when empty. */
  peekTime(): number {
    return this.n > 0 ? this.times[0] : Number.POSITIVE_INFINITY;
  }

  peekOrder(): number {
    return this.orders[0];
  }

  peekPayload(): number {
    return this.payloads[0];
  }

  push(time: number, order: number, payload: number): void {
    if (this.n === this.times.length) this.grow();
    let i = this.n++;
    const times = this.times;
    const orders = this.orders;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = times[parent];
      if (pt < time || (pt === time && orders[parent] <= order)) break;
      this.move(parent, i);
      i = parent;
    }
    this.place(i, time, order, payload);
  }

  /** Removes the earliest event; read it first with the peek methods. */
  pop(): void {
    const n = --this.n;
    if (n === 0) return;
    const times = this.times;
    const orders = this.orders;
    const time = times[n];
    const order = orders[n];
    const payload = this.payloads[n];
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      let child = left;
      const right = left + 1;
      if (
        right < n &&
        (times[right] < times[left] || (times[right] === times[left] && orders[right] < orders[left]))
      ) {
        child = right;
      }
      const ct = times[child];
      if (ct > time || (ct === time && orders[child] >= order)) break;
      this.move(child, i);
      i = child;
    }
    this.place(i, time, order, payload);
  }

  /** Copies entry `from` into slot `to` (a sift step). */
  private move(from: number, to: number): void {
    this.times[to] = this.times[from];
    this.orders[to] = this.orders[from];
    this.payloads[to] = this.payloads[from];
  }

  private place(i: number, time: number, order: number, payload: number): void {
    this.times[i] = time;
    this.orders[i] = order;
    this.payloads[i] = payload;
  }

  private grow(): void {
    const cap = this.times.length * 2;
    const times = new Float64Array(cap);
    const orders = new Float64Array(cap);
    const payloads = new Int32Array(cap);
    times.set(this.times);
    orders.set(this.orders);
    payloads.set(this.payloads);
    this.times = times;
    this.orders = orders;
    this.payloads = payloads;
  }
}
