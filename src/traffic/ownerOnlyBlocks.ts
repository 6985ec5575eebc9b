/**
 * Which prompt blocks of a Mooncake-style workload only their own request holds
 * (`RequestSource.ownerOnlyFrom`; engine/kvBlockPool.ts "Owner-only runs").
 *
 * A prompt is its hash ids' token blocks (traffic/blockHashes.ts); an engine block's hash chains
 * its whole prefix, so two rows share an engine block only if both prompts hold every token block
 * up to it. A token value (a hash id as u32) that occurs once in the whole workload therefore
 * marks the rest of its row's prompt, from the engine block holding its first token on, as held
 * by that row alone. Occurrences are counted over every listed id (used by the prompt or not) and
 * repeats within a row count twice: either only makes fewer blocks owner-only, never more. A
 * Mooncake prompt is made of token blocks only, never of an earlier request's output blocks
 * (their hashes include the request: util/outputBlockHash.ts), so a row's output blocks are its
 * own as well. (mooncake-delta prompts do hold earlier outputs: that loader must not use this.)
 */
import { fullBlockCount } from "./blockHashes.js";

/** Values above this are not counted: the workload's rows then have no owner-only prompt blocks. */
const MAX_COUNTED_VALUE = 1 << 26;

export class TokenBlockCounts {
  /** Occurrences of each value, saturating at 2. */
  private counts = new Uint8Array(1024);
  /** A value was too large to count: nothing is known. */
  private unknown = false;

  add(ids: Uint32Array, start: number, count: number): void {
    if (this.unknown) return;
    let counts = this.counts;
    for (let i = start; i < start + count; i++) {
      const v = ids[i];
      if (v >= counts.length) {
        if (v >= MAX_COUNTED_VALUE) {
          this.unknown = true;
          return;
        }
        let size = counts.length;
        while (size <= v) size *= 2;
        const grown = new Uint8Array(size);
        grown.set(counts);
        counts = grown;
        this.counts = grown;
      }
      if (counts[v] < 2) counts[v]++;
    }
  }

  /**
   * The first engine block of a prompt (`ids[start .. start + count)`, `inputLength` tokens) that
   * no other counted row holds, or its full-block count when there is none.
   */
  ownerOnlyFrom(
    ids: Uint32Array,
    start: number,
    count: number,
    inputLength: number,
    traceBlockSize: number,
    engineBlockSize: number,
  ): number {
    const full = fullBlockCount(inputLength, engineBlockSize);
    if (this.unknown) return full;
    const used = Math.min(count, Math.ceil(inputLength / traceBlockSize));
    const counts = this.counts;
    for (let j = 0; j < used; j++) {
      if (counts[ids[start + j]] === 1)
        return Math.min(full, Math.floor((j * traceBlockSize) / engineBlockSize));
    }
    return full;
  }
}
