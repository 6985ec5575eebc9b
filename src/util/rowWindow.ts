/**
 * The live rows of a replayed workload and where their per-row state lives (docs/performance.md
 * "Memory"). Rows are numbered 0, 1, 2, … in workload order; rows `[freed, read)` are live: read
 * from the workload and not yet released. Per-row state is stored at slot `row & mask` of arrays
 * with `capacity` (a power of two) entries, so a row keeps its number everywhere (heap payloads,
 * tie-break ids, engine sequences) while the arrays hold only a window of rows: a row's slot is
 * reused by row + capacity once the row is freed.
 *
 * The stores register here and re-lay their arrays out when the window grows (`reserve`). A
 * materialized workload reserves all its rows at once, so nothing grows later.
 */

/** Something that keeps per-row state at `row & mask` (the collector, a trace stream, the cluster). */
export interface RowStore {
  /**
   * The window grew to `capacity` slots: move rows `[first, end)` from slot `row & oldMask` to
   * `row & (capacity - 1)`, and give the new slots their empty state.
   */
  relayout(first: number, end: number, oldMask: number, capacity: number): void;
}

const MIN_CAPACITY = 64;

export class RowWindow {
  /** Slots per array: a power of two. */
  capacity: number;
  mask: number;
  /** Rows below are released: their slots may hold later rows. */
  freed = 0;
  /** Rows `[0, read)` are known (read from the workload). */
  read = 0;
  /** The most rows live at once (`read - freed` after each `reserve`): the window's high-water mark. */
  peakLive = 0;
  private readonly stores: RowStore[] = [];

  constructor(initialRows = MIN_CAPACITY) {
    this.capacity = powerOfTwoAtLeast(initialRows);
    this.mask = this.capacity - 1;
  }

  /** The slot count `rows` live rows need (a power of two, at least 64). */
  static capacityFor(rows: number): number {
    return powerOfTwoAtLeast(rows);
  }

  /** Registers a store; it must already use `capacity` slots. */
  register(store: RowStore): void {
    this.stores.push(store);
  }

  /** Makes room for rows up to `end` (exclusive), growing every store when the live span needs it. */
  reserve(end: number): void {
    const live = end - this.freed;
    if (live > this.peakLive) this.peakLive = live;
    if (live <= this.capacity) return;
    const oldMask = this.mask;
    const capacity = powerOfTwoAtLeast(live);
    // Rows [freed, read) hold state; [read, end) are about to be written into empty slots.
    for (const s of this.stores) s.relayout(this.freed, this.read, oldMask, capacity);
    this.capacity = capacity;
    this.mask = capacity - 1;
  }
}

function powerOfTwoAtLeast(n: number): number {
  let c = MIN_CAPACITY;
  while (c < n) c *= 2;
  return c;
}

/**
 * `relayout` for one typed column: a new array of `capacity` filled with `empty` (default 0), live rows
 * moved. The window grows rarely (doubling), so one body serves every element type.
 */
type RelayoutColumn<A> = (
  old: A,
  first: number,
  end: number,
  oldMask: number,
  capacity: number,
  empty?: number,
) => A;

function relayoutOf<A extends Float64Array | Int32Array | Uint8Array>(
  Make: new (length: number) => A,
): RelayoutColumn<A> {
  return (old, first, end, oldMask, capacity, empty = 0) => {
    const next = new Make(capacity);
    if (empty !== 0) next.fill(empty);
    const mask = capacity - 1;
    for (let r = first; r < end; r++) next[r & mask] = old[r & oldMask];
    return next;
  };
}

export const relayoutF64: RelayoutColumn<Float64Array> = relayoutOf<Float64Array>(Float64Array);
export const relayoutI32: RelayoutColumn<Int32Array> = relayoutOf<Int32Array>(Int32Array);
export const relayoutU8: RelayoutColumn<Uint8Array> = relayoutOf<Uint8Array>(Uint8Array);

export function relayoutArray<T>(
  old: T[],
  first: number,
  end: number,
  oldMask: number,
  capacity: number,
  empty: T,
): T[] {
  const next = new Array<T>(capacity).fill(empty);
  const mask = capacity - 1;
  for (let r = first; r < end; r++) next[r & mask] = old[r & oldMask];
  return next;
}
