/**
 * `format: applied_compute_agentic` (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`; docs/traces.md): a row is one agent session
 * that becomes `num_turns + 1` requests. The reference's loadgen cases
 * (`test_from_applied_compute_agentic_*`) and every malformed line as `FILE:LINE: field 'NAME'`.
 */
import { describe, expect, it } from "vitest";
import { APPLIED_COMPUTE_REFERENCE_ROW } from "../../scripts/make-format-fixtures.js";
import { loadAppliedComputeAgenticTrace } from "../../src/traffic/appliedComputeAgentic.js";
import { promptBlockHashes } from "../../src/traffic/blockHashes.js";
import type { RequestTable } from "../../src/traffic/requests.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { writeTrace } from "../helpers/specs.js";

function hashes(t: RequestTable, row: number): number[] {
  return Array.from(t.blockHashes.subarray(t.blockOffsets[row], t.blockOffsets[row + 1]));
}

const REFERENCE_ROW = APPLIED_COMPUTE_REFERENCE_ROW;

describe("loadAppliedComputeAgenticTrace: the reference's cases", () => {
  it("expands a row into num_turns + 1 requests: 100 → 140 → 200 tokens, delays 0 / 500 / 1250 ms", async () => {
    const t = await loadAppliedComputeAgenticTrace(writeTrace([REFERENCE_ROW]), {
      traceBlockSize: 64,
      engineBlockSize: 16,
    });
    expect(t.count).toBe(3);
    expect(t.sessionCount).toBe(1);
    expect(Array.from(t.inputLength)).toEqual([100, 140, 200]);
    expect(Array.from(t.outputLength)).toEqual([10, 20, 50]);
    expect(Array.from(t.delayAfterPreviousMs)).toEqual([0, 500, 1250]);
    expect(Array.from(t.turn)).toEqual([0, 1, 2]);
    expect(Array.from(t.nextTurnRow)).toEqual([1, 2, -1]);
    // No first-turn timestamps (the format needs concurrency load).
    expect(Array.from(t.timestampMs).every(Number.isNaN)).toBe(true);
    expect(t.sessionIds).toEqual(["applied_compute_agentic_session_1"]);
  });

  it("hash ids extend across turns: [1,2,3] → [1,2,3] → [1,2,3,4] at block 256", async () => {
    const row = {
      num_turns: 2,
      input_prompt_length: 600,
      assistant_response_length: [40, 50],
      tool_call_output_length: [40, 50],
      tool_call_latency: [0.1, 0.2],
      final_assistant_response_length: 60,
    };
    const E = 64;
    const t = await loadAppliedComputeAgenticTrace(writeTrace([row]), {
      traceBlockSize: 256,
      engineBlockSize: E,
    });
    expect(Array.from(t.inputLength)).toEqual([600, 680, 780]);
    const ids = [
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3, 4],
    ];
    for (let k = 0; k < 3; k++) {
      expect(hashes(t, k)).toEqual(Array.from(promptBlockHashes(ids[k], 256, E, t.inputLength[k]).sequence));
    }
    // So turn k's blocks are a prefix of turn k + 1's.
    expect(hashes(t, 1).slice(0, hashes(t, 0).length)).toEqual(hashes(t, 0));
    expect(hashes(t, 2).slice(0, hashes(t, 1).length)).toEqual(hashes(t, 1));
  });

  it("ids are unique over the file: sessions share no block; zero tool turns is one request", async () => {
    const t = await loadAppliedComputeAgenticTrace(
      writeTrace([
        REFERENCE_ROW,
        {
          ...REFERENCE_ROW,
          num_turns: 0,
          assistant_response_length: [],
          tool_call_output_length: [],
          tool_call_latency: [],
        },
      ]),
      { traceBlockSize: 16, engineBlockSize: 16 },
    );
    expect(t.count).toBe(4);
    expect(Array.from(t.session)).toEqual([0, 0, 0, 1]);
    expect(Array.from(t.outputLength)).toEqual([10, 20, 50, 50]);
    expect(Array.from(t.sessionFirstRow)).toEqual([0, 3]);
    expect(t.sessionIds).toEqual(["applied_compute_agentic_session_1", "applied_compute_agentic_session_2"]);
    const first = new Set(hashes(t, 2));
    for (const h of hashes(t, 3)) expect(first.has(h)).toBe(false);
    // Session 2's ids continue the counter: 13 blocks of session 1 (200 tokens / 16), then 14...
    expect(hashes(t, 3)).toEqual(
      Array.from(promptBlockHashes([14, 15, 16, 17, 18, 19, 20], 16, 16, 100).sequence),
    );
  });
});

describe("loadAppliedComputeAgenticTrace: bad rows name FILE:LINE and the field", () => {
  const cases: [string, ReadonlyArray<object | string>, string][] = [
    [
      "missing num_turns",
      [{ ...REFERENCE_ROW, num_turns: undefined }],
      "1: field 'num_turns': required field is missing",
    ],
    [
      "fractional num_turns",
      [{ ...REFERENCE_ROW, num_turns: 1.5 }],
      "1: field 'num_turns': expected a non-negative integer, got 1.5",
    ],
    [
      "zero prompt",
      [{ ...REFERENCE_ROW, input_prompt_length: 0 }],
      "1: field 'input_prompt_length': expected a positive integer, got 0",
    ],
    [
      "array length",
      ["", { ...REFERENCE_ROW, tool_call_output_length: [30] }],
      "2: field 'tool_call_output_length': expected num_turns = 2 entries, got 1",
    ],
    [
      "not an array",
      [{ ...REFERENCE_ROW, assistant_response_length: 10 }],
      "1: field 'assistant_response_length': expected an array of non-negative integers, got 10",
    ],
    [
      "negative latency",
      [{ ...REFERENCE_ROW, tool_call_latency: [0.5, -1] }],
      "1: field 'tool_call_latency': element 1: expected a finite non-negative number of seconds, got -1",
    ],
    [
      "string length",
      [{ ...REFERENCE_ROW, assistant_response_length: [10, "20"] }],
      `1: field 'assistant_response_length': element 1: expected a non-negative integer, got "20"`,
    ],
    [
      "missing final",
      [{ ...REFERENCE_ROW, final_assistant_response_length: null }],
      "1: field 'final_assistant_response_length': required field is missing",
    ],
    [
      "prompt overflow",
      [
        {
          ...REFERENCE_ROW,
          assistant_response_length: [2_000_000_000, 0],
          tool_call_output_length: [0, 2_000_000_000],
        },
      ],
      "1: field 'tool_call_output_length': turn 2's prompt would be 4000000100 tokens, more than 2147483647",
    ],
    ["not an object", ["[1, 2]"], "1: expected a JSON object, got [1,2]"],
  ];
  for (const [name, rows, tail] of cases) {
    it(name, async () => {
      const path = writeTrace(rows);
      const err = await loadAppliedComputeAgenticTrace(path, {
        traceBlockSize: 64,
        engineBlockSize: 16,
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TraceError);
      expect((err as Error).message).toBe(`${path}:${tail}`);
    });
  }
});
