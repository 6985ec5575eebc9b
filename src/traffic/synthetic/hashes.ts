/**
 * Block hashes of generated prompts, chained block by block without materializing tokens or hash
 * ids. A generated prompt is a list of engine blocks, each "filled" with one u32 value: block `b`
 * of the prompt gets `chainHash(hash(b − 1), localHashOfRun(value, E))`, exactly what
 * `computeBlockHashes` gives for a prompt whose trace block size equals the engine block size
 * (blockHashes.ts), so equal value prefixes ⇔ equal hash prefixes.
 *
 * Value spaces never overlap: unique blocks count up from 1 below 2^31 (`UniqueIds`); a shared
 * group prefix fills its blocks with `GROUP_VALUE_BASE + group`.
 */
import { chainHash, localHashOfRun, SEQUENCE_HASH_SEED } from "../../util/blockHash.js";

export const GROUP_VALUE_BASE = 0x80000000;
const UNIQUE_LIMIT = 0x80000000;

/** Hands out block values no other block of the workload has. */
export class UniqueIds {
  private next = 1;

  take(count: number): number {
    const first = this.next;
    this.next += count;
    if (this.next > UNIQUE_LIMIT) throw new RangeError("synthetic workload too large for u31 block ids");
    return first;
  }
}

/**
 * Writes `count` chained hashes into `out[at ..]`, block k filled with value `firstValue + k`
 * (`step` 1) or with `firstValue` for all (`step` 0), chained from `parent` (SEQUENCE_HASH_SEED for
 * a prompt's first block). Returns the last hash written (or `parent` when count is 0).
 */
export function writeChain(
  out: Float64Array,
  at: number,
  count: number,
  parent: number,
  firstValue: number,
  step: 0 | 1,
  engineBlockSize: number,
): number {
  let h = parent;
  if (step === 0) {
    const local = localHashOfRun(firstValue, engineBlockSize);
    for (let k = 0; k < count; k++) {
      h = chainHash(h, local);
      out[at + k] = h;
    }
    return h;
  }
  for (let k = 0; k < count; k++) {
    h = chainHash(h, localHashOfRun(firstValue + k, engineBlockSize));
    out[at + k] = h;
  }
  return h;
}

export { SEQUENCE_HASH_SEED };
