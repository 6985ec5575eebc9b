/** `fleetsim convert`: Mooncake → Dynamo request trace, and the round trip back into a RequestTable. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { defaultRequestIdPrefix } from "../../src/traffic/dynamo/convert.js";
import { loadDynamoTrace, readDynamoRequests } from "../../src/traffic/dynamo/index.js";
import { loadMooncakeTrace } from "../../src/traffic/mooncake/index.js";
import { completeTableHashes, type RequestTable, requestIdAt } from "../../src/traffic/requests.js";
import { cli } from "../helpers/cli.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SAMPLE = join(ROOT, "examples/sample_trace.jsonl");
const ORIGIN = 1_760_000_000_000;

const dir = mkdtempSync(join(tmpdir(), "fleetsim-convert-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (name: string) => join(dir, `${n++}-${name}`);

function writeRows(rows: ReadonlyArray<object | string>, name = "trace.jsonl"): string {
  const path = fresh(name);
  writeFileSync(path, rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n");
  return path;
}

function readRecords(path: string): Record<string, unknown>[] {
  const raw = readFileSync(path);
  const text = path.endsWith(".gz") ? gunzipSync(raw).toString("utf8") : raw.toString("utf8");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const requestIdOf = (r: Record<string, unknown>) => (r["request"] as { request_id: string }).request_id;

function blocks(t: RequestTable, i: number): number[] {
  return Array.from(t.blockHashes.subarray(t.blockOffsets[i], t.blockOffsets[i + 1]));
}

describe("fleetsim convert: the bundled sample round trip", async () => {
  const out = fresh("sample-dynamo.jsonl.gz");
  const run = await cli("convert", "--input", SAMPLE, "--output", out);
  const rows = readFileSync(SAMPLE, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, number | string | number[] | undefined>);

  it("writes one gzip record per Mooncake row and says so", () => {
    expect(run.code).toBe(0);
    expect(run.out).toBe(`Wrote ${rows.length} requests to ${out}\n`);
    // The sample's later session turns carry only `delay`: their arrivals are derived.
    expect(run.err).toMatch(/24 later session turns had no timestamp/);
    expect(readFileSync(out).subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(readRecords(out)).toHaveLength(rows.length);
  });

  it("writes the record fields of mooncake_to_dynamo.py", () => {
    const first = readRecords(out)[0];
    expect(first).toEqual({
      schema: "dynamo.request.trace.v1",
      event_type: "request_end",
      event_time_unix_ms: ORIGIN + 0,
      request: {
        request_id: "sample-0",
        request_received_ms: ORIGIN + 0,
        output_tokens: 36,
        replay: { trace_block_size: 512, input_length: 1817, input_sequence_hashes: [100, 101, 102, 103] },
      },
    });
    expect(Object.keys(first)).toEqual(["schema", "event_type", "event_time_unix_ms", "request"]);
  });

  it("loads back to the same requests, lengths, arrivals and prefix-sharing structure", async () => {
    const engine = 64;
    const moon = completeTableHashes(
      await loadMooncakeTrace(SAMPLE, { traceBlockSize: 512, engineBlockSize: engine }),
    );
    const dyn = await loadDynamoTrace([out], { engineBlockSize: engine });
    expect(dyn.count).toBe(moon.count);

    // Expected arrival of each Mooncake row: its timestamp, or (a later turn with only `delay`)
    // its previous turn's arrival + delay.
    const arrival: number[] = [];
    const lastOfSession = new Map<string, number>();
    for (const r of rows) {
      const t =
        typeof r.timestamp === "number"
          ? r.timestamp
          : lastOfSession.get(r.session_id as string)! + ((r.delay as number | undefined) ?? 0);
      arrival.push(t);
      if (typeof r.session_id === "string") lastOfSession.set(r.session_id, t);
    }
    const minArrival = Math.min(...arrival);

    const dynToMoon = new Map<number, number>();
    const moonToDyn = new Map<number, number>();
    const seen = new Set<number>();
    for (let k = 0; k < dyn.count; k++) {
      const i = Number(requestIdAt(dyn.requestIds, k)!.slice("sample-".length)); // line index = Mooncake row
      expect(seen.has(i)).toBe(false);
      seen.add(i);
      expect(dyn.inputLength[k]).toBe(moon.inputLength[i]);
      expect(dyn.outputLength[k]).toBe(moon.outputLength[i]);
      // Mooncake normalizes to its earliest first-turn timestamp, Dynamo to its earliest arrival:
      // both are the sample's first row (t = 0).
      expect(dyn.timestampMs[k]).toBe(arrival[i] - minArrival);
      if (!Number.isNaN(moon.timestampMs[i])) expect(dyn.timestampMs[k]).toBe(moon.timestampMs[i]);
      // Same blocks, and equal hashes exactly where the Mooncake table has equal hashes.
      const d = blocks(dyn, k);
      const m = blocks(moon, i);
      expect(d.length).toBe(m.length);
      for (let b = 0; b < d.length; b++) {
        if (!dynToMoon.has(d[b])) dynToMoon.set(d[b], m[b]);
        if (!moonToDyn.has(m[b])) moonToDyn.set(m[b], d[b]);
        expect(dynToMoon.get(d[b])).toBe(m[b]);
        expect(moonToDyn.get(m[b])).toBe(d[b]);
      }
    }
    expect(seen.size).toBe(rows.length);
    // The sample does share prefixes (system prompts, session history), so the check has teeth.
    expect(dynToMoon.size).toBeLessThan(dyn.blockHashes.length);
  });
});

describe("fleetsim convert: split into history and replay", () => {
  /** `fleetsim convert --input INPUT --split-at-seconds 60 --history HISTORY --replay REPLAY`. */
  const splitAt60 = (input: string, history: string, replay: string) =>
    cli("convert", "--input", input, "--split-at-seconds", "60", "--history", history, "--replay", replay);

  it("puts every request in exactly one file; an arrival exactly at the split goes to replay", async () => {
    const input = writeRows([
      { timestamp: 0, input_length: 10, output_length: 1, hash_ids: [1] },
      { timestamp: 59_999.9, input_length: 10, output_length: 1, hash_ids: [1] },
      { timestamp: 60_000, input_length: 10, output_length: 1, hash_ids: [1] },
      { timestamp: 61_000, input_length: 10, output_length: 1, hash_ids: [2] },
    ]);
    const history = fresh("history.jsonl");
    const replay = fresh("replay.jsonl.gz");
    const r = await splitAt60(input, history, replay);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`Wrote 2 requests to ${history}\nWrote 2 requests to ${replay}\n`);
    const prefix = defaultRequestIdPrefix(input);
    expect(readRecords(history).map(requestIdOf)).toEqual([`${prefix}-0`, `${prefix}-1`]);
    expect(readRecords(replay).map(requestIdOf)).toEqual([`${prefix}-2`, `${prefix}-3`]);
    // int(59_999.9) = 59_999 < 60_000: history, as the script's int(row["timestamp"]).
    expect(readRecords(history).map((x) => x["event_time_unix_ms"])).toEqual([ORIGIN, ORIGIN + 59_999]);
  });

  it("splits the bundled sample into two loadable traces on the same clock", async () => {
    const history = fresh("sample-history.jsonl");
    const replay = fresh("sample-replay.jsonl");
    const r = await splitAt60(SAMPLE, history, replay);
    expect(r.code, r.err).toBe(0);
    const h = await readDynamoRequests([history]);
    const p = await readDynamoRequests([replay]);
    const all = await readDynamoRequests([history, replay]);
    expect(h.count + p.count).toBe(all.count);
    expect(all.count).toBe(315);
    expect(new Set([...h.requestIds, ...p.requestIds]).size).toBe(315);
    expect(Math.max(...h.startMs)).toBeLessThan(ORIGIN + 60_000);
    expect(Math.min(...p.startMs)).toBeGreaterThanOrEqual(ORIGIN + 60_000);
  });
});

describe("fleetsim convert: options", () => {
  it("--trace-block-size, --start-unix-ms and --request-id-prefix", async () => {
    const input = writeRows([{ timestamp: 7.9, input_length: 300, output_length: 2, hash_ids: [5, 6, 7] }]);
    const out = fresh("o.jsonl");
    const r = await cli(
      "convert",
      ...["--input", input, "--output", out, "--trace-block-size", "128", "--start-unix-ms", "0"],
      ...["--request-id-prefix", "run42"],
    );
    expect(r.code, r.err).toBe(0);
    expect(readRecords(out)[0]).toEqual({
      schema: "dynamo.request.trace.v1",
      event_type: "request_end",
      event_time_unix_ms: 7,
      request: {
        request_id: "run42-0",
        request_received_ms: 7,
        output_tokens: 2,
        replay: { trace_block_size: 128, input_length: 300, input_sequence_hashes: [5, 6, 7] },
      },
    });
  });

  it("the default id prefix follows the script (toolagent_trace.jsonl → toolagent-N)", () => {
    expect(defaultRequestIdPrefix("traces/mooncake-fast25/toolagent_trace.jsonl")).toBe("toolagent");
    expect(defaultRequestIdPrefix("x/conversation_trace.jsonl.gz")).toBe("conversation");
    expect(defaultRequestIdPrefix("plain.jsonl")).toBe("plain");
  });

  it("writes what the Mooncake loader reads when input_length and hash_ids disagree", async () => {
    const input = writeRows([
      // Capacity 2 × 4 = 8 < 20: the length is clamped.
      { timestamp: 0, input_length: 20, output_length: 1, hash_ids: [1, 2] },
      // 5 tokens need 2 hash ids; the third never reaches a token.
      { timestamp: 1, input_length: 5, output_length: 1, hash_ids: [1, 3, 9] },
      // No input_length: the capacity.
      { timestamp: 2, output_length: 1, hash_ids: [4] },
    ]);
    const out = fresh("adjusted.jsonl");
    const r = await cli("convert", "--input", input, "--output", out, "--trace-block-size", "4");
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/2 rows had input_length and hash_ids that disagree/);
    const replays = readRecords(out).map((x) => (x["request"] as { replay: unknown }).replay);
    expect(replays).toEqual([
      { trace_block_size: 4, input_length: 8, input_sequence_hashes: [1, 2] },
      { trace_block_size: 4, input_length: 5, input_sequence_hashes: [1, 3] },
      { trace_block_size: 4, input_length: 4, input_sequence_hashes: [4] },
    ]);
    const moon = await loadMooncakeTrace(input, { traceBlockSize: 4, engineBlockSize: 2 });
    const dyn = await loadDynamoTrace([out], { engineBlockSize: 2 });
    expect(Array.from(dyn.inputLength)).toEqual(Array.from(moon.inputLength));
  });

  it("--help lists the options with examples", async () => {
    const r = await cli("convert", "--help");
    expect(r.code).toBe(0);
    for (const flag of [
      "--input",
      "--output",
      "--trace-block-size",
      "--split-at-seconds",
      "--history",
      "--replay",
    ]) {
      expect(r.out).toContain(flag);
    }
    expect(r.out).toContain("--start-unix-ms");
    expect(r.out).toContain("Examples:");
    expect(r.out).toContain("fleetsim convert --input traces/toolagent_trace.jsonl --split-at-seconds 1200");
  });
});

describe("fleetsim convert: errors exit 2 and leave nothing behind", () => {
  const good = { timestamp: 0, input_length: 10, output_length: 1, hash_ids: [1] };

  function entries(d: string): string[] {
    return readdirSync(d).sort();
  }

  it("malformed JSON names the file and line", async () => {
    const input = writeRows([good, good, '{"timestamp": 5, "input_length":']);
    const outDir = fresh("out-dir");
    const out = join(outDir, "trace.jsonl");
    const r = await cli("convert", "--input", input, "--output", out);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^fleetsim: error: ${escapeRegExp(input)}:3: invalid JSON`));
    expect(entries(outDir)).toEqual([]); // the temporary file is gone, nothing was renamed
  });

  it("a row without a timestamp (and no earlier turn of its session) is an error", async () => {
    const input = writeRows([good, { input_length: 10, output_length: 1, hash_ids: [1] }]);
    const r = await cli("convert", "--input", input, "--output", fresh("x.jsonl"));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${input}:2: field 'timestamp': required`);
  });

  it("missing output_length and bad hash_ids name their field", async () => {
    const a = writeRows([{ timestamp: 0, input_length: 3, hash_ids: [1] }]);
    expect((await cli("convert", "--input", a, "--output", fresh("x.jsonl"))).err).toContain(
      `${a}:1: field 'output_length': required field is missing`,
    );
    const b = writeRows([{ timestamp: 0, output_length: 3, hash_ids: [1, -1] }]);
    expect((await cli("convert", "--input", b, "--output", fresh("x.jsonl"))).err).toContain(
      `${b}:1: field 'hash_ids': element 1`,
    );
  });

  it("a failed conversion keeps an existing output untouched", async () => {
    const out = fresh("keep.jsonl");
    writeFileSync(out, "previous\n");
    const input = writeRows([good, "not json"]);
    const r = await cli("convert", "--input", input, "--output", out);
    expect(r.code).toBe(2);
    expect(readFileSync(out, "utf8")).toBe("previous\n");
    expect(entries(dirname(out)).filter((f) => f.includes("keep.jsonl"))).toEqual([basename(out)]);
  });

  it("a missing input file", async () => {
    const r = await cli("convert", "--input", join(dir, "nope.jsonl"), "--output", fresh("x.jsonl"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/nope\.jsonl: cannot read trace file/);
  });

  const usage: { name: string; args: string[]; message: RegExp }[] = [
    {
      name: "no output",
      args: [],
      message: /needs --output, or --split-at-seconds with --history and --replay/,
    },
    {
      name: "output and split",
      args: ["--output", "a.jsonl", "--split-at-seconds", "1", "--history", "h", "--replay", "r"],
      message: /--output cannot be combined/,
    },
    {
      name: "split without replay",
      args: ["--split-at-seconds", "1", "--history", "h"],
      message: /go together/,
    },
    {
      name: "same history and replay",
      args: ["--split-at-seconds", "1", "--history", "h.jsonl", "--replay", "./h.jsonl"],
      message: /must be different files/,
    },
    {
      name: "zero block size",
      args: ["--output", "a", "--trace-block-size", "0"],
      message: /positive integer/,
    },
    { name: "negative split", args: ["--split-at-seconds", "-1"], message: /non-negative number of seconds/ },
  ];
  for (const u of usage) {
    it(`usage: ${u.name}`, async () => {
      const input = writeRows([good]);
      const r = await cli("convert", "--input", input, ...u.args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(u.message);
    });
  }

  it("an unreadable output location", async () => {
    const blocker = fresh("file-not-dir");
    writeFileSync(blocker, "");
    const r = await cli("convert", "--input", writeRows([good]), "--output", join(blocker, "out.jsonl"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot write .*out\.jsonl/);
    expect(existsSync(join(blocker, "out.jsonl"))).toBe(false);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
