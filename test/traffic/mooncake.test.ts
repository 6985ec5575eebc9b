import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import type { RunSpec } from "../../src/config/runSpec.js";
import { fullBlockCount, promptBlockHashes } from "../../src/traffic/blockHashes.js";
import { readJsonlLines } from "../../src/traffic/jsonlReader.js";
import { loadMooncakeTrace } from "../../src/traffic/mooncake/index.js";
import { completeTableHashes, type RequestTable } from "../../src/traffic/requests.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { CONVERSATION_600S, CONVERSATION_600S_ROWS } from "../helpers/fixtures.js";
import { summaryOfWorkload } from "../helpers/replay.js";
import { kvOrRoundRobin, traceSpec } from "../helpers/specs.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SAMPLE = join(ROOT, "examples/sample_trace.jsonl");

const dir = mkdtempSync(join(tmpdir(), "fleetsim-traffic-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let fileNo = 0;

/** Writes rows (objects are JSON-encoded, strings written verbatim) to a fresh temp file. */
function writeTrace(rows: ReadonlyArray<object | string>, name = "trace.jsonl"): string {
  const path = join(dir, `${fileNo++}-${name}`);
  writeFileSync(path, rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n");
  return path;
}

const small = { traceBlockSize: 4, engineBlockSize: 2 } as const;

async function expectTraceError(
  path: string,
  line: number,
  field: string | undefined,
  pattern: RegExp,
  opts: { traceBlockSize: number; engineBlockSize: number; requireTimestamps?: boolean } = small,
): Promise<TraceError> {
  let caught: unknown;
  try {
    await loadMooncakeTrace(path, opts);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TraceError);
  const e = caught as TraceError;
  expect(e.file).toBe(path);
  expect(e.line).toBe(line);
  expect(e.field).toBe(field);
  const where = line > 0 ? `${path}:${line}: ` : `${path}: `;
  expect(e.message.startsWith(where + (field === undefined ? "" : `field '${field}': `))).toBe(true);
  expect(e.message).toMatch(pattern);
  return e;
}

function plain(t: RequestTable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(t)) {
    // The on-demand hasher is code over the rows (hashes completed before comparing), not data.
    if (k !== "lazyHashes") out[k] = ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v;
  }
  return out;
}

describe("loadMooncakeTrace: reference cases", () => {
  it("expands hash_ids [1,2] at trace block 4, length 6, like tokens [1,1,1,1,2,2]", async () => {
    const t = completeTableHashes(
      await loadMooncakeTrace(
        writeTrace([{ timestamp: 0, input_length: 6, output_length: 2, hash_ids: [1, 2] }]),
        small,
      ),
    );
    expect(t.count).toBe(1);
    expect(t.inputLength[0]).toBe(6);
    expect(t.outputLength[0]).toBe(2);
    expect(t.engineBlockSize).toBe(2);
    expect(Array.from(t.blockOffsets)).toEqual([0, 3]);
    expect(Array.from(t.blockHashes)).toEqual(Array.from(promptBlockHashes([1, 2], 4, 2, 6).sequence));
  });

  it("defaults a missing input_length to hash capacity and clamps a longer one", async () => {
    const t = await loadMooncakeTrace(
      writeTrace([
        { timestamp: 0, output_length: 1, hash_ids: [1, 2] },
        { timestamp: 0, input_tokens: 100, output_tokens: 1, hash_ids: [1, 2] },
        { created_time: 0, input_length: 5, output_length: 0, hash_ids: [1, 2] },
      ]),
      small,
    );
    expect(Array.from(t.inputLength)).toEqual([8, 8, 5]);
    expect(Array.from(t.outputLength)).toEqual([1, 1, 0]);
    expect(Array.from(t.blockOffsets)).toEqual([0, 4, 8, 10]);
  });

  it("multi-turn sessions use session_id and delay / timestamp deltas", async () => {
    const t = await loadMooncakeTrace(
      writeTrace([
        { session_id: "s1", timestamp: 1000, output_length: 1, hash_ids: [1] }, // row 0
        { session_id: "s1", delay: 250, output_length: 1, hash_ids: [1, 2] }, // row 1
        { timestamp: 1500, output_length: 1, hash_ids: [9], request_id: "solo" }, // row 2
        { session_id: 7, timestamp: 2000, output_length: 1, hash_ids: [3] }, // row 3
        { session_id: "s1", delay_ms: 40, timestamp: 9999, output_length: 1, hash_ids: [1, 2, 3] }, // row 4
        { session_id: 7, timestamp: 2600, output_length: 1, hash_ids: [3, 4], request_id: 42 }, // row 5
        { session_id: 7, timestamp: 2500, output_length: 1, hash_ids: [3, 4, 5] }, // row 6: negative delta
        { session_id: "s1", output_length: 1, hash_ids: [1, 2, 3, 4] }, // row 7: no delay, no timestamp
      ]),
      small,
    );
    expect(t.count).toBe(8);
    expect(t.sessionCount).toBe(3);
    expect(t.sessionIds).toEqual(["s1", null, "7"]);
    expect(Array.from(t.session)).toEqual([0, 0, 1, 2, 0, 2, 2, 0]);
    expect(Array.from(t.turn)).toEqual([0, 1, 0, 0, 2, 1, 2, 3]);
    expect(Array.from(t.sessionFirstRow)).toEqual([0, 2, 3]);
    expect(Array.from(t.nextTurnRow)).toEqual([1, 4, -1, 5, 7, 6, -1, -1]);
    expect(Array.from(t.delayAfterPreviousMs)).toEqual([0, 250, 0, 0, 40, 600, 0, 0]);
    expect(t.requestIds).toEqual([null, null, "solo", null, null, "42", null, null]);
    // Normalized by the earliest first-turn timestamp (1000); later-turn timestamps shift too.
    expect(Array.from(t.timestampMs)).toEqual([0, Number.NaN, 500, 1000, 8999, 1600, 1500, Number.NaN]);
  });

  it("accepts and ignores priority fields and unknown keys; null optionals count as absent", async () => {
    const t = await loadMooncakeTrace(
      writeTrace([
        {
          timestamp: 3,
          output_length: 2,
          hash_ids: [1],
          priority: 5,
          strict_priority: 1,
          policy_class: "x",
          extra: { a: 1 },
          session_id: null,
          delay: null,
          output_token_ids: [7, 8],
        },
      ]),
      small,
    );
    expect(t.count).toBe(1);
    expect(t.timestampMs[0]).toBe(0);
    expect(t.sessionIds).toEqual([null]);
  });
});

describe("loadMooncakeTrace: timestamps", () => {
  it("normalizes so the minimum first-turn timestamp is 0, even when rows are unordered", async () => {
    const t = await loadMooncakeTrace(
      writeTrace([
        { timestamp: 5000, output_length: 1, hash_ids: [1] },
        { timestamp: 7000.5, output_length: 1, hash_ids: [1] },
        { timestamp: 6000, output_length: 1, hash_ids: [1] },
      ]),
      small,
    );
    expect(Array.from(t.timestampMs)).toEqual([0, 2000.5, 1000]);
  });

  it("requires a first-turn timestamp under trace timestamps, not under concurrency", async () => {
    const rows = [
      { timestamp: 10, output_length: 1, hash_ids: [1] },
      { session_id: "a", output_length: 1, hash_ids: [1] },
    ];
    await expectTraceError(writeTrace(rows), 2, "timestamp", /required on the first turn/);
    const t = await loadMooncakeTrace(writeTrace(rows), { ...small, requireTimestamps: false });
    expect(Array.from(t.timestampMs)).toEqual([0, Number.NaN]);
  });
});

describe("loadMooncakeTrace: malformed lines", () => {
  const ok = { timestamp: 0, output_length: 1, hash_ids: [1] };

  it("invalid JSON", async () => {
    await expectTraceError(
      writeTrace([ok, ok, '{"timestamp": 0, "output_length": ']),
      3,
      undefined,
      /invalid JSON/,
    );
  });

  it("a row that is not an object", async () => {
    await expectTraceError(writeTrace([ok, "[1,2]"]), 2, undefined, /expected a JSON object, got \[1,2\]/);
  });

  it("missing output_length", async () => {
    await expectTraceError(writeTrace([ok, { timestamp: 0, hash_ids: [1] }]), 2, "output_length", /missing/);
  });

  it("non-integer output_length", async () => {
    const path = writeTrace([ok, ok, ok, { timestamp: 0, output_length: "abc", hash_ids: [1] }]);
    const e = await expectTraceError(path, 4, "output_length", /expected a non-negative integer, got "abc"/);
    expect(e.message).toBe(`${path}:4: field 'output_length': expected a non-negative integer, got "abc"`);
  });

  it("negative input_length (and its alias)", async () => {
    await expectTraceError(
      writeTrace([{ timestamp: 0, input_length: -5, output_length: 1, hash_ids: [1] }]),
      1,
      "input_length",
      /non-negative integer, got -5/,
    );
    await expectTraceError(
      writeTrace([ok, { timestamp: 0, input_tokens: 1.5, output_length: 1, hash_ids: [1] }]),
      2,
      "input_tokens",
      /got 1.5/,
    );
  });

  it("hash_ids missing, not an array, or with a bad element", async () => {
    await expectTraceError(writeTrace([{ timestamp: 0, output_length: 1 }]), 1, "hash_ids", /missing/);
    await expectTraceError(
      writeTrace([ok, { timestamp: 0, output_length: 1, hash_ids: "1,2" }]),
      2,
      "hash_ids",
      /expected an array/,
    );
    await expectTraceError(
      writeTrace([ok, ok, { timestamp: 0, output_length: 1, hash_ids: [1, -2] }]),
      3,
      "hash_ids",
      /element 1: expected a non-negative integer, got -2/,
    );
  });

  it("output_token_ids length mismatch", async () => {
    await expectTraceError(
      writeTrace([ok, { timestamp: 0, output_length: 3, hash_ids: [1], output_token_ids: [1, 2] }]),
      2,
      "output_token_ids",
      /expected 3 token ids/,
    );
  });

  it("delay on a first turn", async () => {
    await expectTraceError(
      writeTrace([ok, { session_id: "s", timestamp: 0, delay: 5, output_length: 1, hash_ids: [1] }]),
      2,
      "delay",
      /not allowed on the first turn/,
    );
    await expectTraceError(
      writeTrace([{ timestamp: 0, delay_ms: 5, output_length: 1, hash_ids: [1] }]),
      1,
      "delay_ms",
      /not allowed on the first turn/,
    );
  });

  it("bad timestamp, delay, session_id and request_id types", async () => {
    await expectTraceError(
      writeTrace([{ timestamp: "0", output_length: 1, hash_ids: [1] }]),
      1,
      "timestamp",
      /got "0"/,
    );
    await expectTraceError(
      writeTrace([
        ok,
        { ...ok, session_id: "s" },
        { session_id: "s", delay: -1, output_length: 1, hash_ids: [1] },
      ]),
      3,
      "delay",
      /non-negative number/,
    );
    await expectTraceError(writeTrace([{ ...ok, session_id: [1] }]), 1, "session_id", /string or number/);
    await expectTraceError(writeTrace([{ ...ok, request_id: {} }]), 1, "request_id", /string or number/);
  });

  it("counts physical lines, including blank and CRLF lines", async () => {
    const path = join(dir, "crlf.jsonl");
    const okLine = JSON.stringify(ok);
    writeFileSync(path, `${okLine}\r\n\r\n   \n${okLine}\r\n{"timestamp":0,"hash_ids":[1]}\r\n`);
    await expectTraceError(path, 5, "output_length", /missing/);
  });

  it("missing file, empty trace, corrupt gzip", async () => {
    const missing = join(dir, "does-not-exist.jsonl");
    await expectTraceError(missing, 0, undefined, /cannot read trace file/);
    await expectTraceError(writeTrace(["", "  "]), 0, undefined, /trace has no rows/);
    const corrupt = join(dir, "corrupt.jsonl.gz");
    const gz = gzipSync(Buffer.from(`${JSON.stringify(ok)}\n`.repeat(1000)));
    writeFileSync(corrupt, gz.subarray(0, gz.length - 30));
    await expectTraceError(corrupt, 0, undefined, /cannot decompress trace file/);
  });
});

describe("gzip detection and the line reader", () => {
  it("detects gzip by magic bytes (not extension) and yields identical tables, multi-member too", async () => {
    const text = readFileSync(SAMPLE);
    const opts = { traceBlockSize: 512, engineBlockSize: 64 };
    const expected = plain(completeTableHashes(await loadMooncakeTrace(SAMPLE, opts)));

    const gzNoExt = join(dir, "sample-gzipped.jsonl");
    writeFileSync(gzNoExt, gzipSync(text));
    expect(plain(completeTableHashes(await loadMooncakeTrace(gzNoExt, opts)))).toEqual(expected);

    const cut = text.indexOf(10, Math.floor(text.length / 3)) + 1;
    const multi = join(dir, "sample-multi.jsonl.gz");
    writeFileSync(multi, Buffer.concat([gzipSync(text.subarray(0, cut)), gzipSync(text.subarray(cut))]));
    expect(plain(completeTableHashes(await loadMooncakeTrace(multi, opts)))).toEqual(expected);

    const plainNamedGz = join(dir, "plain.jsonl.gz");
    writeFileSync(plainNamedGz, text);
    expect(plain(completeTableHashes(await loadMooncakeTrace(plainNamedGz, opts)))).toEqual(expected);
  });

  it("splits lines across chunk boundaries, keeps multi-byte UTF-8 intact, handles a missing final newline", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) lines.push(`{"i":${i},"s":"é€😀${"x".repeat(i % 97)}"}`);
    const path = join(dir, "utf8.jsonl");
    writeFileSync(path, `\uFEFF${lines.join("\n")}`); // BOM, no trailing newline, > 1 MiB
    const seen: string[] = [];
    const numbers: number[] = [];
    await readJsonlLines(path, (line, no) => {
      seen.push(line);
      numbers.push(no);
    });
    expect(seen.length).toBe(lines.length);
    expect(seen).toEqual(lines);
    expect(numbers[29_999]).toBe(30_000);

    const gz = join(dir, "utf8.gz");
    writeFileSync(gz, gzipSync(readFileSync(path)));
    const seenGz: string[] = [];
    await readJsonlLines(gz, (line) => seenGz.push(line));
    expect(seenGz).toEqual(lines);
  });

  it("propagates errors thrown by the callback unchanged", async () => {
    const path = writeTrace([{ a: 1 }, { a: 2 }]);
    const boom = new RangeError("boom");
    await expect(
      readJsonlLines(path, () => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });
});

describe("bundled and real traces", () => {
  it("loads examples/sample_trace.jsonl with shared prefixes and multi-turn sessions", async () => {
    const t = await loadMooncakeTrace(SAMPLE, { traceBlockSize: 512, engineBlockSize: 64 });
    expect(t.count).toBeGreaterThanOrEqual(250);
    expect(t.count).toBeLessThanOrEqual(350);
    expect(t.sessionCount).toBeLessThan(t.count);
    let maxTs = 0;
    for (let i = 0; i < t.count; i++) {
      expect(t.inputLength[i]).toBeGreaterThanOrEqual(200);
      expect(t.inputLength[i]).toBeLessThanOrEqual(8000);
      expect(t.outputLength[i]).toBeGreaterThanOrEqual(10);
      expect(t.outputLength[i]).toBeLessThanOrEqual(400);
      if (t.timestampMs[i] > maxTs) maxTs = t.timestampMs[i];
    }
    expect(maxTs).toBeGreaterThan(100_000);
    expect(maxTs).toBeLessThan(140_000);
    // Prefix sharing: many requests share their first engine block hash (a system prompt).
    const firstBlock = new Map<number, number>();
    for (let i = 0; i < t.count; i++) {
      if (t.blockOffsets[i + 1] > t.blockOffsets[i]) {
        const h = t.blockHashes[t.blockOffsets[i]];
        firstBlock.set(h, (firstBlock.get(h) ?? 0) + 1);
      }
    }
    expect(Math.max(...firstBlock.values())).toBeGreaterThan(30);
    // Later turns extend the previous turn's blocks.
    let extended = 0;
    for (let i = 0; i < t.count; i++) {
      const next = t.nextTurnRow[i];
      if (next < 0) continue;
      const a = t.blockHashes.subarray(t.blockOffsets[i], t.blockOffsets[i + 1]);
      const b = t.blockHashes.subarray(t.blockOffsets[next], t.blockOffsets[next + 1]);
      const fullTraceBlocks = Math.floor(t.inputLength[i] / 512) * 8;
      expect(Array.from(b.subarray(0, fullTraceBlocks))).toEqual(Array.from(a.subarray(0, fullTraceBlocks)));
      extended++;
    }
    expect(extended).toBeGreaterThan(10);
  });

  it("loads the first 600 s of the Mooncake FAST'25 conversation trace (gzipped fixture)", async () => {
    // The whole trace (12,031 rows) and its load speed: test/shared-data/traffic.conversation.test.ts.
    const t = await loadMooncakeTrace(CONVERSATION_600S, { traceBlockSize: 512, engineBlockSize: 64 });
    expect(t.count).toBe(CONVERSATION_600S_ROWS);
    expect(t.sessionCount).toBe(CONVERSATION_600S_ROWS);
    expect(t.timestampMs[0]).toBe(0);
    expect(t.timestampMs[t.count - 1]).toBeLessThan(600_000);
    let expectedBlocks = 0;
    for (let i = 0; i < t.count; i++) {
      expect(t.blockOffsets[i + 1] - t.blockOffsets[i]).toBe(fullBlockCount(t.inputLength[i], 64));
      expectedBlocks += fullBlockCount(t.inputLength[i], 64);
    }
    expect(t.blockHashes.length).toBe(expectedBlocks);
    // Rows 0 and 1 share hash id 0 (one 512-token block = 8 engine blocks), then diverge.
    const a = t.blockHashes.subarray(t.blockOffsets[0], t.blockOffsets[1]);
    const b = t.blockHashes.subarray(t.blockOffsets[1], t.blockOffsets[2]);
    expect(Array.from(a.subarray(0, 8))).toEqual(Array.from(b.subarray(0, 8)));
    expect(a[8]).not.toBe(b[8]);
  });
});

describe("a Mooncake table's hashes past each row's owner-only blocks, written on demand", () => {
  /** Rows sharing hash ids 1 and 2, then ids of their own: owner-only from their third hash id. */
  const rows = Array.from({ length: 24 }, (_, i) => ({
    timestamp: i,
    input_length: 20,
    output_length: 16,
    hash_ids: [1, 2, 100 + i, 200 + i, 300 + i],
  }));

  it("hashes a prompt up to its owner-only start at load; a replay gives what the whole hashes give", async () => {
    const path = writeTrace(rows, "owner-only.jsonl");
    const opts = { traceBlockSize: 4, engineBlockSize: 4 };
    const whole = completeTableHashes(await loadMooncakeTrace(path, opts));
    // Round robin with room, a cache that preempts, and a KV-aware router (which reads every hash).
    const cases: [string, RunSpec][] = [
      ["round robin", traceSpec(path, { role: { replicas: 2, blockSize: 4, numGpuBlocks: 400 } })],
      [
        "preempting",
        traceSpec(path, { role: { replicas: 2, blockSize: 4, numGpuBlocks: 12, maxSequences: 8 } }),
      ],
      [
        "kv router",
        {
          ...traceSpec(path, { role: { replicas: 2, blockSize: 4, numGpuBlocks: 400 } }),
          router: kvOrRoundRobin(true),
        },
      ],
    ];
    for (const [name, spec] of cases) {
      const lazy = await loadMooncakeTrace(path, opts);
      expect(lazy.ownerOnlyFrom![0]).toBe(2);
      // Row 0: blocks 0–1 hashed at load, 2–4 not yet.
      expect(lazy.lazyHashes!.hashedCount(0)).toBe(2);
      expect(Array.from(lazy.blockHashes.subarray(2, 5))).toEqual([0, 0, 0]);
      const got = await summaryOfWorkload(spec, lazy);
      if (name === "preempting") expect(got.preemptions, name).toBeGreaterThan(0);
      expect(got, name).toEqual(await summaryOfWorkload(spec, { ...whole, lazyHashes: null }));
      // What a use asked for was written, and is the whole hashes: every row for the router, the
      // preempted ones (re-registered in the index) when the cache preempts, none otherwise.
      let completed = 0;
      for (let r = 0; r < lazy.count; r++) {
        const [from, to] = [lazy.blockOffsets[r], lazy.blockOffsets[r + 1]];
        if (lazy.lazyHashes!.hashedCount(r) < to - from) continue;
        completed++;
        expect(Array.from(lazy.blockHashes.subarray(from, to)), name).toEqual(
          Array.from(whole.blockHashes.subarray(from, to)),
        );
      }
      if (name === "kv router") expect(completed).toBe(lazy.count);
      else if (name === "preempting") expect(completed).toBeGreaterThan(0);
      else expect(completed).toBe(0);
    }
  });
});
