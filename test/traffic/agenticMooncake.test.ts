/**
 * `format: agentic_mooncake` (`ai-dynamo/dynamo@9ce5bc5:lib/mocker/src/loadgen/driver.rs`, `ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`; docs/traces.md): rows are request nodes with
 * required unique ids, `wait_for` dependencies and a `delay + tool_wait_ms` after them. The
 * reference's loadgen cases (`test_from_agentic_mooncake_*`) and every malformed line as
 * `FILE:LINE: field 'NAME': ...`.
 */
import { describe, expect, it } from "vitest";
import { loadAgenticMooncakeTrace } from "../../src/traffic/agenticMooncake.js";
import { promptBlockHashes } from "../../src/traffic/blockHashes.js";
import type { RequestTable } from "../../src/traffic/requests.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { writeTrace } from "../helpers/specs.js";

const opts = { traceBlockSize: 4, engineBlockSize: 2 } as const;
const node = (id: string, extra: object = {}): object => ({
  request_id: id,
  input_length: 4,
  output_length: 1,
  hash_ids: [1],
  ...extra,
});

function waits(t: RequestTable, row: number): number[] {
  const d = t.dependencies!;
  return Array.from(d.waitRows.subarray(d.waitOffsets[row], d.waitOffsets[row + 1]));
}

describe("loadAgenticMooncakeTrace: the reference's cases", () => {
  it("preserves dependencies and the tool wait: delay 5 + tool_wait_ms 7 = 12 ms after r1", async () => {
    const path = writeTrace([
      node("r1", { session_id: "root", timestamp: 0, priority: 5, strict_priority: 6, prefix_reset: true }),
      node("r2", { session_id: "root", timestamp: 100, delay: 5, tool_wait_ms: 7, wait_for: ["r1"] }),
    ]);
    const t = await loadAgenticMooncakeTrace(path, opts);
    expect(t.count).toBe(2);
    expect(t.requestIds).toEqual(["r1", "r2"]);
    expect(waits(t, 0)).toEqual([]);
    expect(waits(t, 1)).toEqual([0]);
    expect(Array.from(t.delayAfterPreviousMs)).toEqual([0, 12]);
    // A root is ready at its timestamp; a dependent node's timestamp does not control its release.
    expect(t.timestampMs[0]).toBe(0);
    expect(t.timestampMs[1]).toBeNaN();
    // session_id labels the nodes; each node is its own session (one turn).
    expect(t.sessionIds).toEqual(["root", "root"]);
    expect(Array.from(t.session)).toEqual([0, 1]);
    expect(Array.from(t.turn)).toEqual([0, 0]);
    expect(Array.from(t.nextTurnRow)).toEqual([-1, -1]);
  });

  it("rejects an unknown dependency", async () => {
    const path = writeTrace([node("r1", { wait_for: ["missing"] })]);
    await expect(loadAgenticMooncakeTrace(path, opts)).rejects.toThrow(
      `${path}:1: field 'wait_for': element 0: unknown request_id 'missing'`,
    );
  });

  it("rejects an input_length above the hash capacity (9 tokens in 2 ids of 4)", async () => {
    const path = writeTrace([{ request_id: "r1", input_length: 9, output_length: 1, hash_ids: [1, 2] }]);
    await expect(loadAgenticMooncakeTrace(path, opts)).rejects.toThrow(
      `${path}:1: field 'input_length': 9 tokens exceed the 8 that 2 hash_ids of 4 tokens hold`,
    );
  });
});

describe("loadAgenticMooncakeTrace: graph", () => {
  it("fan-out and join: repeated ids count twice; timestamps shift so the earliest (any row's) is 0", async () => {
    const path = writeTrace([
      node("a", { timestamp: 500, hash_ids: [1, 2], input_length: 8 }),
      node("b", { wait_for: ["a"], timestamp: 400 }),
      node("c", { wait_for: ["a", "a"] }),
      node("d", { wait_for: ["c", "b"], delay_ms: 3 }),
      node("e"),
    ]);
    const t = await loadAgenticMooncakeTrace(path, opts);
    expect(waits(t, 2)).toEqual([0, 0]);
    expect(waits(t, 3)).toEqual([2, 1]);
    expect(t.timestampMs[0]).toBe(100); // 500 − 400, the reference's normalize_starts over every row
    expect(t.timestampMs[4]).toBeNaN(); // a root without a timestamp: ready at 0
    expect(t.delayAfterPreviousMs[3]).toBe(3);
    // Full prompts, hashed as Mooncake rows.
    const h = t.blockHashes.subarray(t.blockOffsets[0], t.blockOffsets[1]);
    expect(Array.from(h)).toEqual(Array.from(promptBlockHashes([1, 2], 4, 2, 8).sequence));
  });

  it("a chain of 100,000 nodes loads (the cycle check is iterative)", async () => {
    const rows = Array.from({ length: 100_000 }, (_, i) =>
      i === 0 ? node("n0", { timestamp: 0 }) : node(`n${i}`, { wait_for: [`n${i - 1}`] }),
    );
    const t = await loadAgenticMooncakeTrace(writeTrace(rows), opts);
    expect(waits(t, 99_999)).toEqual([99_998]);
  });
});

describe("loadAgenticMooncakeTrace: bad rows name FILE:LINE and the field", () => {
  const cases: [string, ReadonlyArray<object | string>, string][] = [
    [
      "missing request_id",
      [{ input_length: 4, output_length: 1, hash_ids: [1] }],
      "1: field 'request_id': required field is missing",
    ],
    ["empty request_id", [node("  ")], `1: field 'request_id': expected a non-empty string, got "  "`],
    [
      "numeric request_id",
      [{ ...node("x"), request_id: 7 }],
      "1: field 'request_id': expected a non-empty string, got 7",
    ],
    [
      "duplicate request_id",
      [node("a"), "", node("a")],
      "3: field 'request_id': 'a' is already the request_id of line 1",
    ],
    [
      "wait_for not a list",
      [node("a", { wait_for: "b" })],
      `1: field 'wait_for': expected an array of request_id strings, got "b"`,
    ],
    [
      "wait_for element",
      [node("a", { wait_for: [3] })],
      "1: field 'wait_for': element 0: expected a request_id string, got 3",
    ],
    [
      "branches element",
      [node("a", { branches: [null] })],
      "1: field 'branches': element 0: expected a request_id string, got null",
    ],
    [
      "prefix_reset",
      [node("a", { prefix_reset: "yes" })],
      `1: field 'prefix_reset': expected true or false, got "yes"`,
    ],
    [
      "negative tool wait",
      [node("a", { tool_wait_ms: -1 })],
      "1: field 'tool_wait_ms': expected a non-negative number of milliseconds, got -1",
    ],
    [
      "negative delay",
      [node("a", { delay: -2 })],
      "1: field 'delay': expected a non-negative number of milliseconds, got -2",
    ],
    [
      "negative timestamp",
      [node("a", { timestamp: -5 })],
      "1: field 'timestamp': expected a non-negative number of milliseconds, got -5",
    ],
    [
      "self wait",
      [node("a"), node("b", { wait_for: ["a", "b"] })],
      "2: field 'wait_for': element 1: request 'b' cannot wait for itself",
    ],
    [
      "cycle",
      [
        node("root"),
        node("x", { wait_for: ["root", "z"] }),
        node("y", { wait_for: ["x"] }),
        node("z", { wait_for: ["y"] }),
      ],
      "2: field 'wait_for': dependency cycle: 'x' (line 2) waits for 'z' (line 4) waits for 'y' (line 3) waits for 'x' (line 2)",
    ],
    [
      "missing output_length",
      [{ request_id: "a", hash_ids: [1] }],
      "1: field 'output_length': required field is missing (also accepted as 'output_tokens')",
    ],
    ["not JSON", ["{oops"], "1: invalid JSON"],
  ];
  for (const [name, rows, tail] of cases) {
    it(name, async () => {
      const path = writeTrace(rows);
      const err = await loadAgenticMooncakeTrace(path, opts).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(TraceError);
      expect((err as Error).message.startsWith(`${path}:${tail}`)).toBe(true);
    });
  }

  it("an empty file", async () => {
    const path = writeTrace([""]);
    await expect(loadAgenticMooncakeTrace(path, opts)).rejects.toThrow(`${path}: trace has no rows`);
  });
});
