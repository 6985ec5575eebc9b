import type { Sequence } from "./sequence.js";

/**
 * Where the requests of a run of plain decode passes cross KV block boundaries
 * (`VllmEngine.runPlainDecodes`): each request computes one token per pass, so it needs a new
 * block every `blockSize` passes and fills one every `blockSize` passes, each at a fixed residue
 * of the pass index. Requests are bucketed by those residues (a stable counting sort, so each
 * bucket keeps batch order), and a pass visits only the requests at a boundary instead of the
 * whole batch.
 */
export class BlockBoundaries {
  /** Requests (batch index) needing a block at passes ≡ r (mod block size): `allocRows[allocStart[r] .. allocStart[r + 1])`. */
  allocStart = new Int32Array(17);
  allocRows = new Int32Array(16);
  /** Requests filling a block at passes ≡ r: `fillRows[fillStart[r] .. fillStart[r + 1])` (only with prefix caching). */
  fillStart = new Int32Array(17);
  fillRows = new Int32Array(16);
  private allocResidue = new Int32Array(16);
  private fillResidue = new Int32Array(16);

  /**
   * Buckets the first `count` requests of `batch` for block size `bs`; `withFills` when filled
   * blocks are registered. False when some request's blocks do not cover exactly its computed
   * tokens rounded up to a block (then the run is not planned here).
   */
  plan(batch: readonly Sequence[], count: number, bs: number, withFills: boolean): boolean {
    if (this.allocStart.length < bs + 1) {
      this.allocStart = new Int32Array(bs + 1);
      this.fillStart = new Int32Array(bs + 1);
    }
    if (this.allocRows.length < count) {
      const n = Math.max(count, 2 * this.allocRows.length);
      this.allocRows = new Int32Array(n);
      this.fillRows = new Int32Array(n);
      this.allocResidue = new Int32Array(n);
      this.fillResidue = new Int32Array(n);
    }
    for (let i = 0; i < count; i++) {
      const s = batch[i];
      // The pass (from 0) at which the next token starts a block: the token at position numComputed.
      const alloc = s.blocks.length * bs - s.numComputed;
      if (alloc < 0 || alloc >= bs) return false;
      this.allocResidue[i] = alloc;
      // The pass at which a block fills: position numComputed + j is a block's last.
      this.fillResidue[i] = bs - 1 - (s.numComputed % bs);
    }
    bucket(this.allocResidue, count, bs, this.allocStart, this.allocRows);
    if (withFills) bucket(this.fillResidue, count, bs, this.fillStart, this.fillRows);
    else this.fillStart.fill(0, 0, bs + 1);
    return true;
  }
}

/** Stable counting sort of `0 .. count)` by `residue` into `rows`, with bucket starts in `start`. */
function bucket(residue: Int32Array, count: number, bs: number, start: Int32Array, rows: Int32Array): void {
  start.fill(0, 0, bs + 1);
  for (let i = 0; i < count; i++) start[residue[i] + 1]++;
  for (let r = 0; r < bs; r++) start[r + 1] += start[r];
  // Place in batch order, advancing a cursor per bucket (start[r] is restored below).
  for (let i = 0; i < count; i++) rows[start[residue[i]]++] = i;
  for (let r = bs; r > 0; r--) start[r] = start[r - 1];
  start[0] = 0;
}
