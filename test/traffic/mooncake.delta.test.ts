/**
 * `format: mooncake-delta` (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`; docs/traces.md): Mooncake session rows whose later
 * turns carry only new input. Turn k's prompt is turn k − 1's prompt + its output + the delta; its
 * blocks extend the previous turn's; the blocks of generated tokens are named as the engine names
 * them (so a later turn can hit them); blocks of trace tokens hash as in a full-prompt trace.
 */

import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { computeBlockHashes, fullBlockCount, promptBlockHashes } from "../../src/traffic/blockHashes.js";
import { CumulativePrompt, loadMooncakeDeltaTrace } from "../../src/traffic/mooncake/delta.js";
import { loadMooncakeTrace } from "../../src/traffic/mooncake/index.js";
import type { RequestTable } from "../../src/traffic/requests.js";
import { completeTableHashes } from "../../src/traffic/requests.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { SEQUENCE_HASH_SEED } from "../../src/util/blockHash.js";
import { outputBlockHash } from "../../src/util/outputBlockHash.js";
import { writeTrace } from "../helpers/specs.js";

const T = 4;
const E = 2;
const opts = { traceBlockSize: T, engineBlockSize: E } as const;

function hashes(t: RequestTable, row: number): number[] {
  return Array.from(t.blockHashes.subarray(t.blockOffsets[row], t.blockOffsets[row + 1]));
}

describe("loadMooncakeDeltaTrace: prompts accumulate", () => {
  it("turn k = turn k−1's prompt + its output + the delta; sessions interleave; delays as Mooncake", async () => {
    const path = writeTrace([
      { session_id: "a", timestamp: 10, input_length: 6, output_length: 3, hash_ids: [1, 2] },
      { session_id: "b", timestamp: 20, input_length: 4, output_length: 1, hash_ids: [9] },
      { session_id: "a", timestamp: 40, delay: 25, input_length: 5, output_length: 2, hash_ids: [3, 4] },
      { session_id: "a", timestamp: 90, input_length: 1, output_length: 7, hash_ids: [5] },
      { session_id: "b", delay: 5, input_length: 8, output_length: 0, hash_ids: [6, 7] },
    ]);
    const t = await loadMooncakeDeltaTrace(path, opts);
    // a: 6, 6+3+5 = 14, 14+2+1 = 17; b: 4, 4+1+8 = 13.
    expect(Array.from(t.inputLength)).toEqual([6, 4, 14, 17, 13]);
    expect(Array.from(t.outputLength)).toEqual([3, 1, 2, 7, 0]);
    expect(Array.from(t.session)).toEqual([0, 1, 0, 0, 1]);
    expect(Array.from(t.turn)).toEqual([0, 0, 1, 2, 1]);
    expect(Array.from(t.nextTurnRow)).toEqual([2, 4, 3, -1, -1]);
    // Timestamps normalized to the first session; the delay, else the timestamp difference (90 − 40).
    expect(Array.from(t.timestampMs)).toEqual([0, 10, 30, 80, Number.NaN]);
    expect(Array.from(t.delayAfterPreviousMs)).toEqual([0, 0, 25, 50, 5]);
    expect(t.sessionIds).toEqual(["a", "b"]);
    for (let r = 0; r < t.count; r++) expect(hashes(t, r)).toHaveLength(fullBlockCount(t.inputLength[r], E));
  });

  it("a turn's blocks are a prefix of the next turn's, and sessions share their first prompts' trace blocks only", async () => {
    const path = writeTrace([
      { session_id: "a", timestamp: 0, input_length: 8, output_length: 5, hash_ids: [1, 2] },
      { session_id: "b", timestamp: 0, input_length: 8, output_length: 5, hash_ids: [1, 2] },
      { session_id: "a", input_length: 4, output_length: 3, hash_ids: [3] },
      { session_id: "b", input_length: 4, output_length: 3, hash_ids: [3] },
      { session_id: "a", input_length: 3, output_length: 1, hash_ids: [4] },
    ]);
    const t = await loadMooncakeDeltaTrace(path, opts);
    expect(hashes(t, 2).slice(0, hashes(t, 0).length)).toEqual(hashes(t, 0));
    expect(hashes(t, 4).slice(0, hashes(t, 2).length)).toEqual(hashes(t, 2));
    // Same first prompt: the same blocks; after each session's own output, nothing in common.
    expect(hashes(t, 1)).toEqual(hashes(t, 0));
    const a1 = hashes(t, 2);
    const b1 = hashes(t, 3);
    expect(a1.slice(0, 4)).toEqual(b1.slice(0, 4));
    for (let k = 4; k < a1.length; k++) expect(b1).not.toContain(a1[k]);
  });

  it("turn 0 hashes exactly as a full-prompt Mooncake row (the reference reads the same tokens)", async () => {
    const rows = [
      { session_id: "a", timestamp: 0, input_length: 11, output_length: 2, hash_ids: [7, 7, 8] },
      { timestamp: 3, output_length: 2, hash_ids: [5, 6, 5] },
    ];
    const delta = await loadMooncakeDeltaTrace(writeTrace(rows), opts);
    const full = completeTableHashes(await loadMooncakeTrace(writeTrace(rows), opts));
    expect(Array.from(delta.blockHashes)).toEqual(Array.from(full.blockHashes));
    expect(Array.from(delta.inputLength)).toEqual(Array.from(full.inputLength));
  });

  it("blocks of a previous turn's output carry the engine's hashes of that request's output blocks", async () => {
    // Turn 0: 5 tokens (blocks 0, 1 full; block 2 holds token 4 and output), 6 output tokens.
    const path = writeTrace([
      { session_id: "a", timestamp: 0, input_length: 5, output_length: 6, hash_ids: [1, 2] },
      { session_id: "a", input_length: 3, output_length: 1, hash_ids: [3] },
    ]);
    const t = await loadMooncakeDeltaTrace(path, opts);
    expect(t.inputLength[1]).toBe(14);
    const h0 = hashes(t, 0);
    const h1 = hashes(t, 1);
    // What vllmEngine.registerFullBlocks names the blocks of row 0 past its prompt's full blocks.
    let parent = h0[h0.length - 1];
    for (let b = 2; b < 5; b++) {
      parent = outputBlockHash(parent, 0, b);
      expect(h1[b]).toBe(parent);
    }
    // Blocks 5, 6 hold the tail of the output (token 10) and the delta: chained on the output.
    expect(h1).toHaveLength(7);
    expect(new Set(h1).size).toBe(7);
  });

  it("after a zero-output turn whose prompt ends on a trace block, the prompt hashes as the concatenated ids", async () => {
    const path = writeTrace([
      { session_id: "a", timestamp: 0, input_length: 8, output_length: 0, hash_ids: [1, 2] },
      { session_id: "a", input_length: 6, output_length: 2, hash_ids: [3, 3] },
    ]);
    const t = await loadMooncakeDeltaTrace(path, opts);
    expect(hashes(t, 1)).toEqual(Array.from(promptBlockHashes([1, 2, 3, 3], T, E, 14).sequence));
  });
});

describe("CumulativePrompt: trace tokens hash as blockHashes.ts does", () => {
  test.prop(
    [
      fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 12 }),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 1, max: 8 }),
      fc.integer({ min: 0, max: 4 }),
      fc.integer({ min: 1, max: 3 }),
    ],
    { numRuns: 200 },
  )("any ids, block sizes and split into deltas", (raw, traceBlock, engineBlock, cut, parts) => {
    const ids = Uint32Array.from(raw);
    const tokens = Math.max(0, ids.length * traceBlock - cut);
    const expected = new Float64Array(fullBlockCount(tokens, engineBlock));
    computeBlockHashes(ids, 0, ids.length, traceBlock, tokens, engineBlock, expected, 0);
    // The same tokens appended as several zero-output turns, cut at trace-block boundaries.
    const prompt = new CumulativePrompt(engineBlock);
    const per = Math.ceil(ids.length / parts);
    for (let start = 0; start < ids.length; start += per) {
      const count = Math.min(per, ids.length - start);
      const take = Math.min(count * traceBlock, tokens - start * traceBlock);
      if (take > 0) prompt.appendTrace(ids, start, count, traceBlock, take);
      prompt.appendOutput(0, 0);
    }
    expect(prompt.tokens).toBe(tokens);
    expect(prompt.hashes).toEqual(Array.from(expected));
  });

  it("the first block of a prompt of output only chains on the seed, as the engine's", () => {
    const prompt = new CumulativePrompt(4);
    prompt.appendOutput(7, 9);
    expect(prompt.hashes).toEqual([
      outputBlockHash(SEQUENCE_HASH_SEED, 7, 0),
      outputBlockHash(outputBlockHash(SEQUENCE_HASH_SEED, 7, 0), 7, 1),
    ]);
  });
});

describe("loadMooncakeDeltaTrace: bad rows", () => {
  async function rejection(
    path: string,
    o: Parameters<typeof loadMooncakeDeltaTrace>[1] = opts,
  ): Promise<TraceError> {
    const err = await loadMooncakeDeltaTrace(path, o).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TraceError);
    return err as TraceError;
  }

  it("a malformed row: FILE:LINE: field 'NAME' (the Mooncake rules)", async () => {
    const path = writeTrace([
      { session_id: "a", timestamp: 0, output_length: 1, hash_ids: [1] },
      { session_id: "a", hash_ids: [2] },
    ]);
    const e = await rejection(path);
    expect(e.message).toBe(
      `${path}:2: field 'output_length': required field is missing (also accepted as 'output_tokens')`,
    );
  });

  it("a first turn without a timestamp under trace_timestamps; a delay on a first turn", async () => {
    const noTs = writeTrace([{ session_id: "a", output_length: 1, hash_ids: [1] }]);
    expect((await rejection(noTs)).message).toMatch(new RegExp(`^${noTs}:1: field 'timestamp': required`));
    const delayed = writeTrace([
      { session_id: "a", timestamp: 0, delay: 5, output_length: 1, hash_ids: [1] },
    ]);
    expect((await rejection(delayed)).message).toMatch(
      new RegExp(`^${delayed}:1: field 'delay': a delay is not allowed`),
    );
  });

  it("a prompt that accumulates past 2^31 − 1 tokens names the turn's line", async () => {
    const big = { output_length: 2_100_000_000, hash_ids: [1], input_length: 1 };
    const path = writeTrace([
      { session_id: "a", timestamp: 0, ...big },
      "",
      { session_id: "a", ...big },
      { session_id: "a", ...big },
    ]);
    const e = await rejection(path, { traceBlockSize: 4, engineBlockSize: 4 });
    // Turn 1 is 2,100,000,002 tokens (fits); turn 2 would be 4,200,000,003.
    expect(e.message).toBe(
      `${path}:4: field 'input_length': this turn's prompt (the previous prompt, its output and this delta) would be 4200000003 tokens, more than 2147483647`,
    );
  });
});
