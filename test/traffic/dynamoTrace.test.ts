import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { promptBlockHashes } from "../../src/traffic/blockHashes.js";
import { buildDynamoTable, loadDynamoTrace, readDynamoRequests } from "../../src/traffic/dynamo/index.js";
import { expandTracePaths, matchesPattern } from "../../src/traffic/dynamo/paths.js";
import type { RequestTable } from "../../src/traffic/requests.js";
import { TraceError } from "../../src/traffic/traceError.js";

const dir = mkdtempSync(join(tmpdir(), "fleetsim-dynamo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;

const T0 = 1_700_000_000_000;

interface RecordSpec {
  received?: number | null;
  event?: number;
  total?: number;
  isl?: number;
  osl?: number;
  hashes?: unknown[];
  bs?: number;
  session?: string;
}

/** A `request_end` record (block size 4 by default; hashes default to ceil(isl/4) ids). */
function rec(id: string, s: RecordSpec = {}): Record<string, unknown> {
  const bs = s.bs ?? 4;
  const isl = s.isl ?? 8;
  const request: Record<string, unknown> = {
    request_id: id,
    model: "m",
    input_tokens: isl,
    output_tokens: s.osl ?? 3,
    replay: {
      trace_block_size: bs,
      input_length: isl,
      input_sequence_hashes: s.hashes ?? Array.from({ length: Math.ceil(isl / bs) }, (_, k) => k + 1),
    },
  };
  if (s.received !== undefined) request["request_received_ms"] = s.received;
  if (s.total !== undefined) request["total_time_ms"] = s.total;
  const out: Record<string, unknown> = {
    schema: "dynamo.request.trace.v1",
    event_type: "request_end",
    event_time_unix_ms: s.event ?? (s.received ?? T0) + (s.total ?? 10),
    event_source: "dynamo",
    request,
  };
  if (s.session !== undefined) out["agent_context"] = { session_id: s.session, parent_session_id: null };
  return out;
}

const toolEnd = {
  schema: "dynamo.request.trace.v1",
  event_type: "tool_end",
  event_time_unix_ms: T0 + 5,
  agent_context: { session_id: "x" },
  tool: { name: "search", duration_ms: 3, status: "ok", tool_call_id: "t1" },
};

/** Writes rows (objects JSON-encoded, strings verbatim) to a fresh file; gzip when asked. */
function write(
  rows: ReadonlyArray<object | string>,
  name = "trace.jsonl",
  opts: { gzip?: boolean; at?: string } = {},
) {
  const path = join(opts.at ?? dir, opts.at === undefined ? `${fileNo++}-${name}` : name);
  const text = rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n";
  writeFileSync(path, opts.gzip ? gzipSync(text) : text);
  return path;
}

function freshDir(): string {
  const d = join(dir, `d${fileNo++}`);
  mkdirSync(d);
  return d;
}

function arr(v: ArrayLike<number>): number[] {
  return Array.from(v);
}

function blocksOf(t: RequestTable, i: number): number[] {
  return arr(t.blockHashes.subarray(t.blockOffsets[i], t.blockOffsets[i + 1]));
}

async function traceError(promise: Promise<unknown>): Promise<TraceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TraceError);
  return err as TraceError;
}

const E2 = { engineBlockSize: 2 } as const;

describe("loadDynamoTrace: a handmade standard trace", () => {
  it("loads request_end rows into the expected RequestTable", async () => {
    const path = write([
      // Dynamo writes rows at completion, so the file is not in arrival order.
      rec("b", { received: T0 + 250, total: 40, isl: 6, osl: 7, hashes: [1, 9] }),
      toolEnd,
      { schema: "dynamo.request.trace.v1", event_type: "request_payload", request_id: "a" },
      rec("a", { received: T0 + 100, total: 500, isl: 8, osl: 4, hashes: [1, 2] }),
      // No request_received_ms: arrival = event time − total time.
      rec("c", { event: T0 + 1_000, total: 300, isl: 3, osl: 0, hashes: [5] }),
    ]);
    const t = await loadDynamoTrace([path], E2);
    expect(t.count).toBe(3);
    expect(t.requestIds).toEqual(["a", "b", "c"]);
    expect(arr(t.timestampMs)).toEqual([0, 150, 600]);
    expect(arr(t.inputLength)).toEqual([8, 6, 3]);
    expect(arr(t.outputLength)).toEqual([4, 7, 0]);
    // Standard trace: every request is a session of its own.
    expect(t.sessionCount).toBe(3);
    expect(arr(t.session)).toEqual([0, 1, 2]);
    expect(arr(t.turn)).toEqual([0, 0, 0]);
    expect(arr(t.sessionFirstRow)).toEqual([0, 1, 2]);
    expect(arr(t.nextTurnRow)).toEqual([-1, -1, -1]);
    expect(arr(t.delayAfterPreviousMs)).toEqual([0, 0, 0]);
    expect(t.sessionIds).toEqual([null, null, null]);
    expect(t.engineBlockSize).toBe(2);
    // Full engine blocks only: 8/2, 6/2, 3/2.
    expect(arr(t.blockOffsets)).toEqual([0, 4, 7, 8]);
  });

  it("shares prefixes exactly as Mooncake hash_ids do (compact ids in first-appearance order)", async () => {
    const path = write([
      rec("a", { received: T0, isl: 8, hashes: [777, 888] }),
      rec("b", { received: T0 + 1, isl: 8, hashes: [777, 999] }),
      rec("c", { received: T0 + 2, isl: 8, hashes: [777, 888] }),
    ]);
    const t = await loadDynamoTrace([path], E2);
    const [a, b, c] = [blocksOf(t, 0), blocksOf(t, 1), blocksOf(t, 2)];
    expect(a).toEqual(c);
    expect(b.slice(0, 2)).toEqual(a.slice(0, 2));
    expect(b[2]).not.toBe(a[2]);
    // The compact ids are 0, 1, 2 (777, 888, 999): the same expansion as Mooncake hash_ids [0, 1].
    expect(a).toEqual(Array.from(promptBlockHashes([0, 1], 4, 2, 8).sequence));
    expect(b).toEqual(Array.from(promptBlockHashes([0, 2], 4, 2, 8).sequence));
  });

  it("keeps u64 hashes above 2^53 exact: equal stay equal, neighbours stay distinct", async () => {
    const line = (id: string, at: number, h: string) =>
      `{"schema":"dynamo.request.trace.v1","event_type":"request_end","event_time_unix_ms":${at},` +
      `"request":{"request_id":"${id}","request_received_ms":${at},"output_tokens":1,` +
      `"replay":{"trace_block_size":4,"input_length":4,"input_sequence_hashes":[${h}]}}}`;
    // 2^64−1 and 2^64−2 are the same double; JSON.parse alone would merge them.
    const path = write([
      line("a", T0, "18446744073709551615"),
      line("b", T0 + 1, "18446744073709551614"),
      line("c", T0 + 2, "18446744073709551615"),
    ]);
    const t = await loadDynamoTrace([path], E2);
    expect(blocksOf(t, 0)).toEqual(blocksOf(t, 2));
    expect(blocksOf(t, 0)[0]).not.toBe(blocksOf(t, 1)[0]);
    const tooBig = write([line("a", T0, "18446744073709551616")]);
    const e = await traceError(loadDynamoTrace([tooBig], E2));
    expect(e.message).toMatch(/does not fit a u64/);
  });

  it("a repeated request_id keeps its first row in reading order", async () => {
    const first = write([rec("a", { received: T0 + 5, osl: 1 }), rec("a", { received: T0, osl: 2 })]);
    const r = await readDynamoRequests([first]);
    expect(r.count).toBe(1);
    expect(r.duplicateRows).toBe(1);
    expect(arr(r.outputLength)).toEqual([1]);
    expect(arr(r.startMs)).toEqual([T0 + 5]);
  });

  it("ties in arrival are ordered by completion, then reading order", async () => {
    const path = write([
      rec("z", { received: T0, total: 5 }),
      rec("y", { received: T0, total: 9 }),
      rec("x", { received: T0, total: 5 }),
    ]);
    const t = await loadDynamoTrace([path], E2);
    expect(t.requestIds).toEqual(["z", "x", "y"]);
  });

  it("accepts a record wrapped as {event: {...}} and a UTF-8 gzip shard named .jsonl", async () => {
    const path = write([{ event: rec("a", { received: T0 }) }], "wrapped.jsonl", { gzip: true });
    const t = await loadDynamoTrace([path], E2);
    expect(t.requestIds).toEqual(["a"]);
  });
});

describe("loadDynamoTrace: shards", () => {
  it("reads a directory's .jsonl and .jsonl.gz shards sorted by name; duplicates keep the first shard's row", async () => {
    const d = freshDir();
    write([rec("a", { received: T0 + 100, osl: 9 }), rec("b", { received: T0 + 50 })], "shard-000002.jsonl", {
      at: d,
    });
    write([rec("a", { received: T0, osl: 1 })], "shard-000001.jsonl.gz", { at: d, gzip: true });
    write(["not json"], "notes.txt", { at: d });
    const r = await readDynamoRequests([d]);
    expect(r.files.map((f) => f.slice(d.length + 1))).toEqual([
      "shard-000001.jsonl.gz",
      "shard-000002.jsonl",
    ]);
    expect(r.requestIds).toEqual(["a", "b"]);
    expect(arr(r.outputLength)).toEqual([1, 3]);
    expect(r.duplicateRows).toBe(1);
  });

  it("expands a last-segment pattern and several paths in order, each file once", async () => {
    const d = freshDir();
    const a = write([rec("a", { received: T0 })], "trace.000001.jsonl.gz", { at: d, gzip: true });
    const b = write([rec("b", { received: T0 + 1 })], "trace.000002.jsonl.gz", { at: d, gzip: true });
    write([rec("c", { received: T0 + 2 })], "other.jsonl", { at: d });
    expect(expandTracePaths([join(d, "trace.*.jsonl.gz")])).toEqual([a, b]);
    expect(expandTracePaths([b, join(d, "trace.00000?.jsonl.gz")])).toEqual([b, a]);
    const t = await loadDynamoTrace([join(d, "trace.*.jsonl.gz"), join(d, "other.jsonl")], E2);
    expect(t.requestIds).toEqual(["a", "b", "c"]);
  });

  it("names a path that matches nothing", () => {
    const d = freshDir();
    expect(() => expandTracePaths([join(d, "*.jsonl")])).toThrow(/no file matches the pattern/);
    expect(() => expandTracePaths([d])).toThrow(/no \.jsonl or \.jsonl\.gz file/);
    expect(() => expandTracePaths([join(d, "missing.jsonl")])).toThrow(/trace file not found/);
    expect(() => expandTracePaths([join(d, "*", "x.jsonl")])).toThrow(
      /only supported in the last path segment/,
    );
  });

  it("matches * and ? against the whole name", () => {
    expect(matchesPattern("dynamo-request-trace.000001.jsonl.gz", "dynamo-request-trace.*.jsonl.gz")).toBe(
      true,
    );
    expect(matchesPattern("a.jsonl", "*.jsonl.gz")).toBe(false);
    expect(matchesPattern("abc", "a?c")).toBe(true);
    expect(matchesPattern("abbc", "a?c")).toBe(false);
    expect(matchesPattern("abc", "*")).toBe(true);
    expect(matchesPattern("aXbXc", "a*b*c")).toBe(true);
    expect(matchesPattern("ab", "a*b*c")).toBe(false);
  });
});

describe("loadDynamoTrace: block size", () => {
  it("takes the embedded size; an explicit block size must equal it (error names both)", async () => {
    const path = write([rec("a", { received: T0, bs: 64, isl: 100, hashes: [1, 2] })]);
    const r = await readDynamoRequests([path], { expectedBlockSize: 64 });
    expect(r.blockSize).toBe(64);
    const e = await traceError(readDynamoRequests([path], { expectedBlockSize: 512 }));
    expect(e.file).toBe(path);
    expect(e.line).toBe(1);
    expect(e.field).toBe("request.replay.trace_block_size");
    expect(e.message).toMatch(/embedded trace block size 64 does not match traffic\.source\.block_size 512/);
  });

  it("rejects mixed block sizes, naming the row and the first request", async () => {
    const path = write([
      rec("a", { received: T0, bs: 4 }),
      toolEnd,
      rec("b", { received: T0, bs: 8, isl: 8 }),
    ]);
    const e = await traceError(readDynamoRequests([path]));
    expect(e.line).toBe(3);
    expect(e.message).toContain(`trace block size 8 differs from 4 of the first request (${path}:1)`);
  });

  it("requires exactly ceil(input_length / trace_block_size) hashes", async () => {
    const path = write([rec("a", { received: T0, isl: 9, hashes: [1, 2] })]);
    const e = await traceError(readDynamoRequests([path]));
    expect(e.message).toBe(
      `${path}:1: field 'request.replay.input_sequence_hashes': expected exactly 3 hashes ` +
        "(ceil(input_length / trace_block_size)), got 2",
    );
  });
});

describe("loadDynamoTrace: malformed rows fail with file, line and field", () => {
  const cases: { name: string; row: object | string; field: string | undefined; pattern: RegExp }[] = [
    { name: "invalid JSON", row: '{"schema": ', field: undefined, pattern: /invalid JSON/ },
    { name: "not an object", row: "[1, 2]", field: undefined, pattern: /expected a JSON object/ },
    {
      name: "no event_type",
      row: { schema: "dynamo.request.trace.v1" },
      field: "event_type",
      pattern: /string/,
    },
    {
      name: "wrong schema",
      row: { ...rec("a", { received: T0 }), schema: "dynamo.request.trace.v2" },
      field: "schema",
      pattern: /expected "dynamo\.request\.trace\.v1", got "dynamo\.request\.trace\.v2"/,
    },
    {
      name: "no event time",
      row: { ...rec("a", { received: T0 }), event_time_unix_ms: undefined },
      field: "event_time_unix_ms",
      pattern: /required field is missing/,
    },
    {
      name: "no request",
      row: { schema: "dynamo.request.trace.v1", event_type: "request_end", event_time_unix_ms: T0 },
      field: "request",
      pattern: /required field is missing/,
    },
    {
      name: "empty request_id",
      row: mutate(rec("a", { received: T0 }), (r) => {
        r.request_id = " ";
      }),
      field: "request.request_id",
      pattern: /non-empty string/,
    },
    {
      // A row without output_tokens is dropped and counted (below); a malformed one is an error.
      name: "negative output_tokens",
      row: rec("a", { received: T0, osl: -1 }),
      field: "request.output_tokens",
      pattern: /integer/,
    },
    {
      name: "no replay",
      row: mutate(rec("a", { received: T0 }), (r) => {
        delete r.replay;
      }),
      field: "request.replay",
      pattern: /required field is missing/,
    },
    {
      name: "fractional arrival",
      row: rec("a", { received: T0 + 0.5, event: T0 + 10 }),
      field: "request.request_received_ms",
      pattern: /non-negative integer/,
    },
    {
      name: "negative total time",
      row: rec("a", { received: T0, total: -1 }),
      field: "request.total_time_ms",
      pattern: /finite number/,
    },
    {
      name: "negative hash",
      row: rec("a", { received: T0, hashes: [1, -2] }),
      field: "request.replay.input_sequence_hashes",
      pattern: /element 1: expected a non-negative integer/,
    },
    {
      name: "string hash",
      row: rec("a", { received: T0, hashes: ["1", 2] }),
      field: "request.replay.input_sequence_hashes",
      pattern: /element 0/,
    },
    {
      name: "zero block size",
      row: rec("a", { received: T0, bs: 0, isl: 0, hashes: [] }),
      field: "request.replay.trace_block_size",
      pattern: /positive/,
    },
    {
      name: "agent_context without session_id",
      row: { ...rec("a", { received: T0 }), agent_context: { parent_session_id: "p" } },
      field: "agent_context.session_id",
      pattern: /non-empty string/,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const path = write([rec("ok", { received: T0 }), c.row]);
      const e = await traceError(readDynamoRequests([path]));
      expect(e.file).toBe(path);
      expect(e.line).toBe(2);
      expect(e.field).toBe(c.field);
      expect(e.message.startsWith(`${path}:2: ${c.field === undefined ? "" : `field '${c.field}': `}`)).toBe(
        true,
      );
      expect(e.message).toMatch(c.pattern);
    });
  }

  it("request_end rows without output_tokens (absent or null) are dropped and counted, not fatal", async () => {
    const path = write([
      rec("a", { received: T0 }),
      mutate(rec("b", { received: T0 + 5 }), (r) => {
        delete r.output_tokens;
      }),
      mutate(rec("c", { received: T0 + 9 }), (r) => {
        r.output_tokens = null;
      }),
      rec("d", { received: T0 + 20 }),
      // A dropped row claims no request_id: a later row with it is a request.
      rec("b", { received: T0 + 30 }),
    ]);
    const r = await readDynamoRequests([path]);
    expect(r.requestIds).toEqual(["a", "d", "b"]);
    expect([...r.droppedStartMs]).toEqual([T0 + 5, T0 + 9]);
    expect(r.duplicateRows).toBe(0);
  });

  it("a trace whose request_end rows all lack output_tokens is an error that says so", async () => {
    const path = write([
      mutate(rec("a", { received: T0 }), (r) => {
        delete r.output_tokens;
      }),
    ]);
    const e = await traceError(readDynamoRequests([path]));
    expect(e.message).toMatch(/no request_end record with output_tokens \(1 without it dropped\)/);
  });

  it("a trace without request_end rows is an error", async () => {
    const path = write([toolEnd]);
    const e = await traceError(readDynamoRequests([path]));
    expect(e.line).toBe(0);
    expect(e.message).toMatch(/no request_end record/);
  });

  it("a gzip shard's malformed line is reported at its line", async () => {
    const path = write([rec("a", { received: T0 }), "{oops"], "bad.jsonl.gz", { gzip: true });
    const e = await traceError(readDynamoRequests([path]));
    expect(e.message.startsWith(`${path}:2: invalid JSON`)).toBe(true);
  });
});

describe("loadDynamoTrace: agent_context sessions", () => {
  it("groups turns by session_id in arrival order; a later turn waits its recorded gap after the previous one", async () => {
    const path = write([
      rec("s1-t2", { received: T0 + 1_000, total: 100, session: "s1" }),
      rec("s2-t1", { received: T0 + 300, total: 50, session: "s2" }),
      rec("s1-t1", { received: T0, total: 400, session: "s1" }),
      // s1-t2 arrived 1_000 − (0 + 400) = 600 ms after s1-t1 completed; s2-t2 arrived before
      // s2-t1 completed (300 + 50), so it waits 0 once s2-t1 finishes in the simulation.
      rec("s2-t2", { received: T0 + 320, total: 10, session: "s2" }),
    ]);
    const r = await readDynamoRequests([path]);
    expect(r.sessionIds).toEqual(["s1", "s2", "s2", "s1"]);
    const t = buildDynamoTable(r, E2);
    expect(t.requestIds).toEqual(["s1-t1", "s2-t1", "s2-t2", "s1-t2"]);
    expect(t.sessionIds).toEqual(["s1", "s2"]);
    expect(t.sessionCount).toBe(2);
    expect(arr(t.session)).toEqual([0, 1, 1, 0]);
    expect(arr(t.turn)).toEqual([0, 0, 1, 1]);
    expect(arr(t.sessionFirstRow)).toEqual([0, 1]);
    expect(arr(t.nextTurnRow)).toEqual([3, 2, -1, -1]);
    expect(arr(t.delayAfterPreviousMs)).toEqual([0, 0, 0, 600]);
    expect(arr(t.timestampMs)).toEqual([0, 300, 320, 1_000]);
    // A window replay can ignore the sessions (open loop).
    const open = buildDynamoTable(r, { ...E2, ignoreSessions: true, rows: [1, 3] });
    expect(open.requestIds).toEqual(["s2-t1", "s1-t2"]);
    expect(open.sessionCount).toBe(2);
    expect(arr(open.timestampMs)).toEqual([0, 700]);
  });

  it("rejects mixing rows with and without agent_context", async () => {
    const path = write([rec("a", { received: T0, session: "s" }), rec("b", { received: T0 })]);
    const e = await traceError(readDynamoRequests([path]));
    expect(e.line).toBe(2);
    expect(e.field).toBe("agent_context");
    expect(e.message).toMatch(/cannot mix requests with and without agent_context/);
  });
});

function mutate(row: Record<string, unknown>, f: (request: Record<string, unknown>) => void): object {
  f(row["request"] as Record<string, unknown>);
  return row;
}
