/**
 * The streamed Mooncake trace (traffic/mooncake/stream.ts): which traces stream, that a malformed
 * row fails before the replay with the table loader's error, that memory holds a window of rows
 * however long the trace, and what happens when the file changes between the two passes.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunSpec } from "../../src/config/runSpec.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { openWorkload } from "../../src/pipeline/workload.js";
import { Replay, type ReplayResult } from "../../src/sim/replay.js";
import { loadMooncakeTrace } from "../../src/traffic/mooncake/index.js";
import { MooncakeStream, openMooncakeStream } from "../../src/traffic/mooncake/stream.js";
import { completeTableHashes } from "../../src/traffic/requests.js";
import { TableSource } from "../../src/traffic/tableSource.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { cliPredict } from "../helpers/cli.js";
import { RUNNABLE_ENGINE } from "../helpers/configHelpers.js";
import { configFile } from "../helpers/configYaml.js";
import { tempDir, traceSpec, writeTrace } from "../helpers/specs.js";

const OPTS = { traceBlockSize: 4, engineBlockSize: 4, speedup: 1 } as const;

/** `n` single-turn rows, one every `gapMs`, prompts of 8 tokens sharing their first block. */
function rows(n: number, gapMs = 10): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    timestamp: 1000 + i * gapMs,
    input_length: 8,
    output_length: 3,
    hash_ids: [1, 100 + i],
  }));
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

describe("which traces stream", () => {
  it("single-turn rows in timestamp order stream; a session seen twice or a row out of order loads as a table", async () => {
    const plain = writeTrace(rows(5));
    expect(await openMooncakeStream(plain, OPTS)).toBeInstanceOf(MooncakeStream);
    const withIds = writeTrace(rows(5).map((r, i) => ({ ...r, session_id: `s${i}` })));
    expect(await openMooncakeStream(withIds, OPTS)).toBeInstanceOf(MooncakeStream);
    const sessions = writeTrace(rows(5).map((r, i) => ({ ...r, session_id: `s${i % 2}` })));
    expect(await openMooncakeStream(sessions, OPTS)).toBeNull();
    const unsorted = rows(5);
    unsorted[3].timestamp = 0;
    const unsortedPath = writeTrace(unsorted);
    expect(await openMooncakeStream(unsortedPath, OPTS)).toBeNull();
    // The pipeline's choice, by load: trace timestamps stream, a closed loop reads the table.
    expect(await openWorkload(traceSpec(plain))).toBeInstanceOf(MooncakeStream);
    expect(await openWorkload(traceSpec(unsortedPath))).toBeInstanceOf(TableSource);
    const closed: RunSpec = { ...traceSpec(plain), load: { type: "concurrency", concurrency: 2 } };
    expect(await openWorkload(closed)).toBeInstanceOf(TableSource);
  });

  it("the stream knows the whole trace before reading it: rows, last arrival (shifted to start at 0), longest context", async () => {
    const r = rows(7);
    r[6].output_length = 40;
    const stream = await openMooncakeStream(writeTrace(r), OPTS);
    expect(stream!.info).toEqual({
      count: 7,
      sessionCount: 7,
      lastFirstTurnMs: 60,
      longestContext: 8 + 40 - 1,
      hasLaterTurns: false,
    });
    expect(stream!.window.read).toBe(0);
  });
});

describe("a malformed row fails before the replay, as the table loader fails it", () => {
  const cases: [string, string][] = [
    ["invalid JSON", "{not json"],
    ["a missing output length", JSON.stringify({ timestamp: 99_000, hash_ids: [1] })],
    ["a negative hash id", JSON.stringify({ timestamp: 99_000, output_length: 1, hash_ids: [1, -2] })],
    [
      "a delay on a first turn",
      JSON.stringify({ timestamp: 99_000, output_length: 1, hash_ids: [1], delay: 5 }),
    ],
    ["a missing timestamp", JSON.stringify({ output_length: 1, hash_ids: [1] })],
  ];
  for (const [what, line] of cases) {
    it(`${what} on the last of 3,001 lines`, async () => {
      const path = join(tempDir(), "trace.jsonl");
      writeFileSync(
        path,
        `${rows(3000)
          .map((r) => JSON.stringify(r))
          .join("\n")}\n${line}\n`,
      );
      const fromStream = await rejection(openMooncakeStream(path, OPTS));
      const fromTable = await rejection(loadMooncakeTrace(path, { ...OPTS, requireTimestamps: true }));
      expect(fromStream).toBeInstanceOf(TraceError);
      expect((fromStream as TraceError).line).toBe(3001);
      expect((fromStream as Error).message).toBe((fromTable as Error).message);
      expect((fromStream as Error).message.startsWith(`${path}:3001: `)).toBe(true);
    });
  }

  it("fleetsim predict: exit 2 naming file and line, and the existing output left as it was", async () => {
    const dir = tempDir();
    const trace = join(dir, "trace.jsonl");
    writeFileSync(
      trace,
      `${rows(2000)
        .map((r) => JSON.stringify(r))
        .join("\n")}\n{"timestamp": 1e9, "hash_ids": [1]}\n`,
    );
    const { config } = configFile(
      `traffic:\n  source: {type: trace, format: mooncake, paths: [${trace}], block_size: 4}\n  load: {type: trace_timestamps}\n${RUNNABLE_ENGINE}`,
      { dir, name: "run.yaml" },
    );
    const out = join(dir, "out");
    mkdirSync(out);
    writeFileSync(join(out, "prediction.json"), "{}\n");
    const run = await cliPredict(config, out, "--overwrite", "--progress", "none");
    expect(run.code).toBe(2);
    expect(run.err).toContain(`${trace}:2001: field 'output_length': required field is missing`);
    expect(run.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(readFileSync(join(out, "prediction.json"), "utf8")).toBe("{}\n");
    expect(existsSync(join(out, "resource-runtime.json"))).toBe(false);
  });
});

async function replayStream(n: number): Promise<{ result: ReplayResult; stream: MooncakeStream }> {
  const path = writeTrace(rows(n, 5));
  const spec = traceSpec(path, { role: { replicas: 2, numGpuBlocks: 64 } });
  // 4 KiB a read (~60 rows), a window that starts at its minimum.
  const stream = await openMooncakeStream(path, {
    ...OPTS,
    readChunkBytes: 4096,
    initialWindowRows: 1,
    retainRows: false,
  });
  const timings = await createRoleTimings(spec.engine);
  const result = await new Replay(spec, stream!, timings, { capturePerRequest: false }).run();
  return { result, stream: stream! };
}

describe("memory holds a window of rows, not the trace", () => {
  it("a trace four times longer replays in the same window; every row is logged and released", async () => {
    const short = await replayStream(5_000);
    const long = await replayStream(20_000);
    for (const [run, n] of [
      [short, 5_000],
      [long, 20_000],
    ] as const) {
      expect(run.result.collector.arrived).toBe(n);
      expect(run.result.requests.count).toBe(n);
      // Released as they ended: nothing is live after the run, in the stream or the collector.
      expect(run.stream.window.freed).toBe(n);
      expect(run.stream.window.read).toBe(n);
      expect(run.result.collector.window).toBe(run.stream.window);
    }
    // The requests in flight plus the rows read ahead (one read of the file): a few hundred.
    expect(long.result.peakLiveRequests).toBeLessThan(300);
    expect(long.result.peakLiveRequests).toBeLessThanOrEqual(short.result.peakLiveRequests + 16);
    expect(long.stream.window.capacity).toBe(short.stream.window.capacity);
    expect(long.stream.window.capacity).toBeLessThanOrEqual(512);
  });

  it("a row's hashes go with it: released rows hold none, in-flight ones share packed chunks", async () => {
    const path = writeTrace(rows(50));
    const stream = (await openMooncakeStream(path, { ...OPTS, hashChunkSize: 16, retainRows: false }))!;
    await stream.fill(Number.NEGATIVE_INFINITY);
    expect(stream.window.read).toBe(50); // one read of a small file
    // Two full blocks each: eight rows to a chunk of 16, at offsets 0, 2, 4, …
    expect(stream.hashCount(0)).toBe(2);
    expect(stream.hashes(1)).toBe(stream.hashes(0));
    expect([stream.hashStart(0), stream.hashStart(1), stream.hashStart(7)]).toEqual([0, 2, 14]);
    expect(stream.hashes(8)).not.toBe(stream.hashes(0));
    const table = completeTableHashes(await loadMooncakeTrace(path, OPTS));
    for (const r of [0, 9, 49]) {
      const mine = stream.hashes(r).subarray(stream.hashStart(r), stream.hashStart(r) + stream.hashCount(r));
      expect(Array.from(mine)).toEqual(
        Array.from(table.blockHashes.subarray(table.blockOffsets[r], table.blockOffsets[r + 1])),
      );
    }
    stream.release(0);
    expect(stream.hashCount(0)).toBe(2);
    expect(stream.hashes(0).length).toBe(0);
    stream.close();
  });
});

describe("lazy hashes: a kept row is hashed as far as a lookup can reach", () => {
  /** Rows sharing hash id 1, then one id of their own, then ids 7 and 8 (shared by all). */
  function shareTail(n: number): Record<string, unknown>[] {
    return Array.from({ length: n }, (_, i) => ({
      timestamp: 1000 + i,
      input_length: 14,
      output_length: 2,
      hash_ids: [1, 100 + i, 7, 8],
    }));
  }

  it("hashes stop at ownerOnlyFrom; completing a row writes the table's hashes, even after its release", async () => {
    const path = writeTrace(shareTail(6));
    const stream = (await openMooncakeStream(path, OPTS))!;
    const eager = (await openMooncakeStream(path, { ...OPTS, lazyHashes: false }))!;
    expect(stream.hashCompleter).toBe(stream);
    expect(eager.hashCompleter).toBeNull();
    await stream.fill(Number.POSITIVE_INFINITY);
    await eager.fill(Number.POSITIVE_INFINITY);
    const table = completeTableHashes(await loadMooncakeTrace(path, OPTS));
    const expected = (r: number): number[] =>
      Array.from(table.blockHashes.subarray(table.blockOffsets[r], table.blockOffsets[r + 1]));
    const held = (s: MooncakeStream, r: number): number[] =>
      Array.from(s.hashes(r).subarray(s.hashStart(r), s.hashStart(r) + s.hashCount(r)));
    for (let r = 0; r < 6; r++) {
      // Three full blocks of 4 tokens: block 0 is shared, block 1 holds the row's own id.
      expect(stream.ownerOnlyFrom(r)).toBe(1);
      expect(stream.hashCount(r)).toBe(3);
      expect(stream.hashedCount(r)).toBe(1);
      expect(held(stream, r)[0]).toBe(expected(r)[0]);
      expect(eager.hashedCount(r)).toBe(3);
      expect(held(eager, r)).toEqual(expected(r));
    }
    // Completed in place while the row is live: the count follows.
    stream.completePromptHashes(2, stream.hashes(2), stream.hashStart(2));
    expect(stream.hashedCount(2)).toBe(3);
    expect(held(stream, 2)).toEqual(expected(2));
    // After its release, into the array a sequence still holds.
    const array = stream.hashes(4);
    const start = stream.hashStart(4);
    stream.release(4);
    stream.completePromptHashes(4, array, start);
    expect(Array.from(array.subarray(start, start + 3))).toEqual(expected(4));
    stream.close();
    eager.close();
  });

  it("a stream that reads the file twice hashes every row whole (it keeps no hash ids to finish one later)", async () => {
    const stream = (await openMooncakeStream(writeTrace(shareTail(3)), { ...OPTS, retainRows: false }))!;
    await stream.fill(Number.POSITIVE_INFINITY);
    expect(stream.hashCompleter).toBeNull();
    for (let r = 0; r < 3; r++) expect(stream.hashedCount(r)).toBe(3);
    stream.close();
  });
});

describe("the file changes between the passes", () => {
  it("a row added after the first pass fails with a TraceError at its line", async () => {
    const path = writeTrace(rows(20));
    const spec = traceSpec(path);
    // Read from the file again (a trace this small is otherwise kept from the first pass).
    const stream = (await openMooncakeStream(path, { ...OPTS, retainRows: false }))!;
    appendFileSync(path, `${JSON.stringify(rows(21)[20])}\n`);
    const replay = new Replay(spec, stream, await createRoleTimings(spec.engine), {
      capturePerRequest: false,
    });
    const err = await rejection(replay.run());
    expect(err).toBeInstanceOf(TraceError);
    expect((err as Error).message).toMatch(new RegExp(`^${path}:21: .*the trace changed while it was read`));
  });

  it("rows kept from the first pass: what was validated is what replays, whatever the file holds now", async () => {
    const path = writeTrace(rows(20));
    const spec = traceSpec(path);
    const stream = (await openMooncakeStream(path, OPTS))!;
    appendFileSync(path, `${JSON.stringify(rows(21)[20])}\n`);
    const result = await new Replay(spec, stream, await createRoleTimings(spec.engine), {
      capturePerRequest: false,
    }).run();
    expect(result.collector.arrived).toBe(20);
    result.requests.close();
  });

  it("a stream is read asynchronously: runSync refuses it", async () => {
    const path = writeTrace(rows(3));
    const spec = traceSpec(path);
    const stream = (await openMooncakeStream(path, OPTS))!;
    const replay = new Replay(spec, stream, await createRoleTimings(spec.engine), {
      capturePerRequest: false,
    });
    expect(() => replay.runSync()).toThrow(/use Replay.run\(\)/);
  });
});
