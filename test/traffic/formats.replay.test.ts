/**
 * `fleetsim predict` on the committed fixtures of the `mooncake-delta`, `agentic_mooncake` and
 * `applied_compute_agentic` formats (test/fixtures/formats/, scripts/make-format-fixtures.ts),
 * with the suite's invariant checks (vitest.config.ts), reading the request log:
 *  - a dependent node never arrives (nor starts) before every request it waits for ended, and
 *    arrives exactly `delay + tool_wait_ms` (÷ speedup) after the last of them;
 *  - a session has one request in flight: turn k + 1 arrives its delay (the tool latency) after
 *    turn k ended;
 *  - prefix caching hits each turn's history (a delta turn: also the previous turn's output);
 *  - two runs are byte-identical; a malformed line exits 2 and leaves the output directory as it was.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FORMAT_FIXTURE_DIR, formatFixtures } from "../../scripts/make-format-fixtures.js";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { cliPredict } from "../helpers/cli.js";
import { configFile, engineYaml } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

const E = 16;
const ENGINE = engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: null,
  kvCache: `{block_size: ${E}, capacity: {type: fixed, blocks: 8000}}`,
  timing: "{type: polynomial}",
});

interface Rec {
  request_id: string | null;
  session_id: string;
  turn_index: number;
  input_length: number;
  output_length: number;
  arrival_time_ms: number;
  first_admit_ms: number;
  terminal_time_ms: number;
  reused_input_tokens: number;
  terminal_status: string;
}

interface PredictionDoc {
  summary: { completed_requests: number };
  run: { traffic: Record<string, unknown> };
}

const fixture = (name: string): string => join(FORMAT_FIXTURE_DIR, name);
const rowsOf = (name: string): Record<string, unknown>[] =>
  readFileSync(fixture(name), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);

async function predict(
  format: string,
  file: string,
  load: string,
  blockSize: number,
  out = join(tempDir("fleetsim-formats-"), "out"),
): Promise<{ records: Rec[]; out: string; doc: PredictionDoc }> {
  const dir = tempDir("fleetsim-formats-");
  const { config } = configFile(
    `traffic:\n  source: {type: trace, format: ${format}, paths: [${file}], block_size: ${blockSize}}\n  load: ${load}\n${ENGINE}`,
    { dir },
  );
  const r = await cliPredict(config, out, "--capture-per-request", "--progress", "none");
  expect(r.code, r.err).toBe(0);
  const records = readFileSync(join(out, "requests.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Rec);
  return {
    records,
    out,
    doc: JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")) as PredictionDoc,
  };
}

function bySession(records: Rec[]): Rec[][] {
  const out = new Map<string, Rec[]>();
  for (const r of records) out.set(r.session_id, [...(out.get(r.session_id) ?? []), r]);
  return [...out.values()].map((turns) => turns.sort((a, b) => a.turn_index - b.turn_index));
}

const strip = (path: string): string =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => !HOST_TIME_KEYS.some((k) => l.includes(`"${k}"`)))
    .join("\n");

describe("committed format fixtures", () => {
  it("are what scripts/make-format-fixtures.ts writes", () => {
    for (const [name, text] of Object.entries(formatFixtures())) {
      expect(readFileSync(fixture(name), "utf8"), name).toBe(text);
    }
  });
});

describe("agentic_mooncake replay", () => {
  const rows = rowsOf("agentic-mooncake.jsonl");
  const minTs = Math.min(...rows.flatMap((r) => (typeof r.timestamp === "number" ? [r.timestamp] : [])));

  for (const speedup of [1, 2]) {
    it(`speedup ${speedup}: no node arrives or starts before its dependencies end; the wait is (delay + tool_wait_ms) / speedup`, async () => {
      const { records, doc } = await predict(
        "agentic_mooncake",
        fixture("agentic-mooncake.jsonl"),
        `{type: trace_timestamps, speedup: ${speedup}}`,
        16,
      );
      expect(records).toHaveLength(rows.length);
      expect(doc.summary.completed_requests).toBe(rows.length);
      expect(doc.run.traffic).toMatchObject({ source: "agentic_mooncake", requests: rows.length });
      const byId = new Map(records.map((r) => [r.request_id, r]));
      let dependents = 0;
      for (const row of rows) {
        const rec = byId.get(row.request_id as string)!;
        expect(rec.terminal_status).toBe("completed");
        expect(rec.first_admit_ms).toBeGreaterThanOrEqual(rec.arrival_time_ms);
        const waits = (row.wait_for as string[] | undefined) ?? [];
        if (waits.length === 0) {
          expect(rec.arrival_time_ms).toBe(((row.timestamp as number) - minTs) / speedup);
          continue;
        }
        dependents++;
        const ends = waits.map((id) => byId.get(id)!.terminal_time_ms);
        for (const end of ends) expect(rec.first_admit_ms).toBeGreaterThanOrEqual(end);
        const wait =
          (((row.delay as number | undefined) ?? 0) + ((row.tool_wait_ms as number | undefined) ?? 0)) /
          speedup;
        expect(rec.arrival_time_ms).toBeCloseTo(Math.max(...ends) + wait, 9);
      }
      expect(dependents).toBeGreaterThan(6);
    });
  }

  it("a branch hits its root's prompt blocks", async () => {
    const { records } = await predict(
      "agentic_mooncake",
      fixture("agentic-mooncake.jsonl"),
      "{type: trace_timestamps}",
      16,
    );
    const byId = new Map(records.map((r) => [r.request_id, r]));
    for (const row of rows) {
      const waits = (row.wait_for as string[] | undefined) ?? [];
      if (waits.length !== 1) continue;
      const root = byId.get(waits[0])!;
      expect(byId.get(row.request_id as string)!.reused_input_tokens).toBeGreaterThanOrEqual(
        Math.floor(root.input_length / E) * E,
      );
    }
  });
});

describe("session formats: one request in flight per session, waits honoured, history hit", () => {
  it("mooncake-delta on timestamps: turn k+1 arrives its delay after turn k ended, hits its prompt and output", async () => {
    const rows = rowsOf("mooncake-delta.jsonl");
    const { records, doc } = await predict(
      "mooncake-delta",
      fixture("mooncake-delta.jsonl"),
      "{type: trace_timestamps}",
      16,
    );
    expect(records).toHaveLength(rows.length);
    expect(doc.run.traffic).toMatchObject({ source: "mooncake-delta", sessions: 4 });
    const sessions = bySession(records);
    expect(sessions).toHaveLength(4);
    const deltas = new Map<string, Record<string, unknown>[]>();
    for (const r of rows)
      deltas.set(r.session_id as string, [...(deltas.get(r.session_id as string) ?? []), r]);
    for (const turns of sessions) {
      const authored = deltas.get(turns[0].session_id)!;
      for (let k = 1; k < turns.length; k++) {
        const prev = turns[k - 1];
        const cur = turns[k];
        expect(cur.arrival_time_ms).toBe(prev.terminal_time_ms + (authored[k].delay as number));
        expect(cur.input_length).toBe(
          prev.input_length + prev.output_length + (authored[k].input_length as number),
        );
        // The previous prompt and the output blocks the previous turn computed are cached.
        const computed = prev.input_length + prev.output_length - 1;
        expect(cur.reused_input_tokens).toBeGreaterThanOrEqual(Math.floor(computed / E) * E);
        expect(cur.reused_input_tokens).toBeGreaterThan(prev.reused_input_tokens);
      }
    }
  });

  it("mooncake-delta under concurrency: sessions keep their slot; still one request in flight per session", async () => {
    const { records } = await predict(
      "mooncake-delta",
      fixture("mooncake-delta.jsonl"),
      "{type: concurrency, concurrency: 2}",
      16,
    );
    for (const turns of bySession(records)) {
      for (let k = 1; k < turns.length; k++) {
        expect(turns[k].arrival_time_ms).toBeGreaterThanOrEqual(turns[k - 1].terminal_time_ms);
      }
    }
    // At most two sessions between their first arrival and their last end at any time.
    const spans = bySession(records).map((t) => [t[0].arrival_time_ms, t[t.length - 1].terminal_time_ms]);
    for (const [start] of spans) {
      expect(spans.filter(([a, b]) => a <= start && start < b).length).toBeLessThanOrEqual(2);
    }
  });

  it("applied_compute_agentic: tool latency × 1000 ms between turns, prompts grow by assistant + tool output, history hit", async () => {
    const rows = rowsOf("applied-compute-agentic.jsonl");
    const { records, doc } = await predict(
      "applied_compute_agentic",
      fixture("applied-compute-agentic.jsonl"),
      "{type: concurrency, concurrency: 2}",
      64,
    );
    const turnsPerRow = rows.map((r) => (r.num_turns as number) + 1);
    expect(records).toHaveLength(turnsPerRow.reduce((a, b) => a + b, 0));
    expect(doc.run.traffic).toMatchObject({
      source: "applied_compute_agentic",
      sessions: rows.length,
      load: "concurrency",
    });
    const sessions = bySession(records);
    rows.forEach((row, s) => {
      const turns = sessions.find((t) => t[0].session_id === `applied_compute_agentic_session_${s + 1}`)!;
      expect(turns).toHaveLength(turnsPerRow[s]);
      const assistant = row.assistant_response_length as number[];
      const tool = row.tool_call_output_length as number[];
      const latency = row.tool_call_latency as number[];
      expect(turns[0].input_length).toBe(row.input_prompt_length);
      for (let k = 1; k < turns.length; k++) {
        const prev = turns[k - 1];
        expect(turns[k].arrival_time_ms).toBeCloseTo(prev.terminal_time_ms + latency[k - 1] * 1000, 9);
        expect(turns[k].input_length).toBe(prev.input_length + assistant[k - 1] + tool[k - 1]);
        expect(turns[k].reused_input_tokens).toBeGreaterThanOrEqual(Math.floor(prev.input_length / E) * E);
        expect(turns[k].reused_input_tokens).toBeGreaterThan(prev.reused_input_tokens);
      }
      expect(turns[turns.length - 1].output_length).toBe(row.final_assistant_response_length);
    });
  });
});

describe("determinism and bad lines", () => {
  const cases: [string, string, string, number][] = [
    ["mooncake-delta", "mooncake-delta.jsonl", "{type: trace_timestamps}", 16],
    ["agentic_mooncake", "agentic-mooncake.jsonl", "{type: trace_timestamps, speedup: 1.5}", 16],
    ["applied_compute_agentic", "applied-compute-agentic.jsonl", "{type: concurrency, concurrency: 3}", 64],
  ];
  for (const [format, file, load, blockSize] of cases) {
    it(`${format}: two runs give byte-identical prediction.json and requests.jsonl`, async () => {
      const a = await predict(format, fixture(file), load, blockSize);
      const b = await predict(format, fixture(file), load, blockSize);
      expect(strip(join(a.out, "prediction.json"))).toBe(strip(join(b.out, "prediction.json")));
      expect(readFileSync(join(a.out, "requests.jsonl"), "utf8")).toBe(
        readFileSync(join(b.out, "requests.jsonl"), "utf8"),
      );
    });
  }

  const bad: [string, string, string, string][] = [
    [
      "mooncake-delta",
      `{"session_id":"a","timestamp":0,"output_length":1,"hash_ids":[1]}\n{"session_id":"a","output_length":-1,"hash_ids":[2]}\n`,
      "{type: trace_timestamps}",
      ":2: field 'output_length': expected a non-negative integer, got -1",
    ],
    [
      "agentic_mooncake",
      `{"request_id":"a","timestamp":0,"output_length":1,"hash_ids":[1],"wait_for":["b"]}\n{"request_id":"b","output_length":1,"hash_ids":[1],"wait_for":["a"]}\n`,
      "{type: trace_timestamps}",
      ":1: field 'wait_for': dependency cycle: 'a' (line 1) waits for 'b' (line 2) waits for 'a' (line 1)",
    ],
    [
      "applied_compute_agentic",
      `{"num_turns":1,"input_prompt_length":10,"assistant_response_length":[1],"tool_call_output_length":[1],"tool_call_latency":["1s"],"final_assistant_response_length":1}\n`,
      "{type: concurrency, concurrency: 1}",
      `:1: field 'tool_call_latency': element 0: expected a finite non-negative number of seconds, got "1s"`,
    ],
  ];
  for (const [format, text, load, message] of bad) {
    it(`${format}: a malformed line exits 2 naming FILE:LINE and the field; the output directory is untouched`, async () => {
      const dir = tempDir("fleetsim-formats-");
      const trace = join(dir, "trace.jsonl");
      writeFileSync(trace, text);
      const { config } = configFile(
        `traffic:\n  source: {type: trace, format: ${format}, paths: [trace.jsonl]}\n  load: ${load}\n${ENGINE}`,
        { dir },
      );
      const out = join(dir, "out");
      mkdirSync(out);
      writeFileSync(join(out, "prediction.json"), "{}\n");
      const r = await cliPredict(config, out, "--overwrite", "--progress", "none");
      expect(r.code).toBe(2);
      expect(r.err).toContain(`${trace}${message}`);
      expect(r.err).not.toMatch(/\n\s+at /);
      expect(readFileSync(join(out, "prediction.json"), "utf8")).toBe("{}\n");
      expect(existsSync(join(out, "requests.jsonl"))).toBe(false);
    });
  }
});
