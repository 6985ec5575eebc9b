/**
 * `format: mooncake-delta` (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`, the AISimulate user guide §11.7): Mooncake rows and
 * sessions (`readMooncakeRows`, the same fields and rules), but a later turn's `input_length` and
 * `hash_ids` describe only its new input. The reference's driver accumulates each session's
 * prompt: turn k's prompt is turn k − 1's prompt, the tokens turn k − 1 generated, then turn k's
 * delta — `L_k = L_{k−1} + out_{k−1} + delta_k`.
 *
 * Block hashes follow the tokens, as the reference's do (it hashes the accumulated token ids):
 *  - a block made only of earlier prompt tokens and the previous turn's output gets exactly the
 *    hash the engine gives that output block of the previous request (util/outputBlockHash.ts,
 *    keyed by its row), so a later turn hits what the previous turn generated while it is cached;
 *  - any other block chains a local hash over its runs of tokens: a run of trace tokens (one
 *    `hash_id` value) absorbs `(value, length)` exactly as `blockHashes.ts` does, so a block of
 *    trace tokens only hashes as it would in a full-prompt Mooncake trace; a run of generated
 *    tokens absorbs a tag, its request's row, where in that output it starts, and its length.
 * Turn k's full blocks are therefore a prefix of turn k + 1's.
 *
 * The prompts are computed when the trace is loaded, assuming every turn generates its whole
 * `output_length` (docs/traces.md "Known differences").
 */
import {
  absorbA,
  absorbB,
  chainHash,
  combine,
  finishA,
  finishB,
  LOCAL_SEED_A,
  LOCAL_SEED_B,
  SEQUENCE_HASH_SEED,
} from "../../util/blockHash.js";
import { outputBlockHash } from "../../util/outputBlockHash.js";
import { blockOffsetsOf } from "../blockHashes.js";
import type { RequestTable } from "../requests.js";
import { TraceError } from "../traceError.js";
import { type MooncakeLoadOptions, mooncakeTable, readMooncakeRows } from "./index.js";

const MAX_I32 = 0x7fffffff;
const TRACE = 0;
const OUTPUT = 1;
/** First word a run of generated tokens absorbs (a trace run absorbs its token value first). */
const OUTPUT_TAG = 0x6f757472; // "outr"

/**
 * One session's accumulated prompt: its tokens as runs (trace tokens of one value, or the output
 * of one earlier request) and the sequence hashes of its full engine blocks, all of them hashed.
 */
export class CumulativePrompt {
  private readonly kinds: number[] = [];
  /** The token value of a trace run, the row of an output run. */
  private readonly values: number[] = [];
  private readonly lengths: number[] = [];
  /** Tokens so far. */
  tokens = 0;
  /** Sequence hashes of the full blocks (`⌊tokens / E⌋` of them). */
  readonly hashes: number[] = [];
  // Where block `hashes.length` starts: a run and an offset in it (possibly its end: `settle`).
  private run = 0;
  private offset = 0;

  constructor(private readonly engineBlockSize: number) {}

  /**
   * Appends the `count` tokens request `row` generated; the prompt so far must be that request's
   * prompt. Each block this completes gets the engine's hash of that output block.
   */
  appendOutput(row: number, count: number): void {
    if (count === 0) return;
    this.push(OUTPUT, row, count);
    const E = this.engineBlockSize;
    const h = this.hashes;
    while ((h.length + 1) * E <= this.tokens) {
      const b = h.length;
      h.push(outputBlockHash(b === 0 ? SEQUENCE_HASH_SEED : h[b - 1], row, b));
      this.skip(E);
    }
  }

  /**
   * Appends `tokens` trace tokens: `ids[start ..]` each repeated `traceBlockSize` times, the last
   * one cut short (`tokens ≤ count · traceBlockSize`).
   */
  appendTrace(ids: Uint32Array, start: number, count: number, traceBlockSize: number, tokens: number): void {
    let left = tokens;
    for (let j = start; left > 0 && j < start + count; j++) {
      const take = Math.min(traceBlockSize, left);
      this.push(TRACE, ids[j], take);
      left -= take;
    }
    const E = this.engineBlockSize;
    const h = this.hashes;
    while ((h.length + 1) * E <= this.tokens) {
      const b = h.length;
      h.push(chainHash(b === 0 ? SEQUENCE_HASH_SEED : h[b - 1], this.localHash()));
    }
  }

  /** Adds a run, merging a trace run into an equal-valued one before it (one run of equal tokens). */
  private push(kind: number, value: number, length: number): void {
    const last = this.kinds.length - 1;
    if (kind === TRACE && last >= 0 && this.kinds[last] === TRACE && this.values[last] === value) {
      this.lengths[last] += length;
    } else {
      this.kinds.push(kind);
      this.values.push(value);
      this.lengths.push(length);
    }
    this.tokens += length;
  }

  /** The local hash of the next `E` tokens (the block at the cursor), moving the cursor past them. */
  private localHash(): number {
    let a = LOCAL_SEED_A;
    let b = LOCAL_SEED_B;
    let words = 0;
    let need = this.engineBlockSize;
    while (need > 0) {
      this.settle();
      const r = this.run;
      const take = Math.min(this.lengths[r] - this.offset, need);
      const v = this.values[r];
      if (this.kinds[r] === TRACE) {
        a = absorbA(absorbA(a, v), take);
        b = absorbB(absorbB(b, v), take);
        words += 2;
      } else {
        a = absorbA(absorbA(absorbA(absorbA(a, OUTPUT_TAG), v), this.offset), take);
        b = absorbB(absorbB(absorbB(absorbB(b, OUTPUT_TAG), v), this.offset), take);
        words += 4;
      }
      this.advance(take);
      need -= take;
    }
    return combine(finishA(a, words), finishB(b, words));
  }

  private skip(n: number): void {
    let left = n;
    while (left > 0) {
      this.settle();
      const take = Math.min(this.lengths[this.run] - this.offset, left);
      this.advance(take);
      left -= take;
    }
  }

  private advance(n: number): void {
    this.offset += n;
  }

  /**
   * Moves the cursor off a run it has consumed. Lazily, not in `advance`: a trace run the cursor
   * reached the end of may still grow (`push` merges an equal value into it).
   */
  private settle(): void {
    while (this.offset === this.lengths[this.run]) {
      this.run++;
      this.offset = 0;
    }
  }
}

/** Loads a `mooncake-delta` trace: each later turn's prompt accumulated from its session's history. */
export async function loadMooncakeDeltaTrace(path: string, opts: MooncakeLoadOptions): Promise<RequestTable> {
  const rows = await readMooncakeRows(path, opts);
  const T = opts.traceBlockSize;
  const E = opts.engineBlockSize;
  const n = rows.count;
  const delta = rows.inputLength;
  const out = rows.outputLength;

  // Pass 1: the accumulated prompt lengths, so the hashes can be written in place.
  const inputLength = new Int32Array(n);
  for (const first of rows.sessionFirstRow) {
    let total = 0;
    let prev = -1;
    for (let r = first; r >= 0; r = rows.nextTurnRow[r]) {
      total += (prev >= 0 ? out[prev] : 0) + delta[r];
      if (total > MAX_I32) {
        throw new TraceError(
          path,
          rows.lines[r],
          `this turn's prompt (the previous prompt, its output and this delta) would be ${total} tokens, more than ${MAX_I32}`,
          "input_length",
        );
      }
      inputLength[r] = total;
      prev = r;
    }
  }
  const blockOffsets = blockOffsetsOf(n, inputLength, E);

  // Pass 2: each session's prompt, grown turn by turn; a row takes the first blocks of its turn.
  const blockHashes = new Float64Array(blockOffsets[n]);
  for (const first of rows.sessionFirstRow) {
    const prompt = new CumulativePrompt(E);
    let prev = -1;
    for (let r = first; r >= 0; r = rows.nextTurnRow[r]) {
      if (prev >= 0) prompt.appendOutput(prev, out[prev]);
      const start = rows.idOffsets[r];
      prompt.appendTrace(rows.ids, start, rows.idOffsets[r + 1] - start, T, delta[r]);
      const h = prompt.hashes;
      const at = blockOffsets[r];
      for (let k = 0; k < h.length; k++) blockHashes[at + k] = h[k];
      prev = r;
    }
  }

  return mooncakeTable(rows, inputLength, { offsets: blockOffsets, hashes: blockHashes }, E);
}
