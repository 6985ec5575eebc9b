/** Growable typed-array columns (capacity doubles when full). Internal to the trace loaders. */

export class GrowableF64 {
  data: Float64Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Float64Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  /** Exact-size copy. */
  toArray(): Float64Array {
    return this.data.slice(0, this.length);
  }
}

export class GrowableI32 {
  data: Int32Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Int32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  toArray(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

export class GrowableU32 {
  data: Uint32Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Uint32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

/**
 * The row columns a trace loader fills: arrival, lengths, session and turn, the delay after the
 * previous turn, and every row's trace hash ids (row r's at `ids[idOffsets[r] .. idOffsets[r + 1])`).
 */
export class TraceColumns {
  readonly timestamp = new GrowableF64();
  readonly delay = new GrowableF64();
  readonly inputLength = new GrowableI32();
  readonly outputLength = new GrowableI32();
  readonly session = new GrowableI32();
  readonly turn = new GrowableI32();
  readonly ids = new GrowableU32(1 << 16);
  readonly idOffsets = new GrowableI32();
  constructor() {
    this.idOffsets.push(0);
  }
}
