/**
 * Generates the tiny trace fixtures of the `mooncake-delta`, `agentic_mooncake` and
 * `applied_compute_agentic` formats under test/fixtures/formats/ (run:
 * `node --import tsx scripts/make-format-fixtures.ts`; test/traffic/formats.replay.test.ts checks
 * the committed files are what this writes). Trace block size 16 for the two Mooncake formats,
 * 64 for the applied-compute one; everything drawn from one seeded PRNG.
 *
 * - delta: 4 sessions of 3–4 turns; first turns on timestamps, later turns with a `delay` (think
 *   time) and only their new input (fresh hash ids).
 * - agentic: 3 independent agent runs, each a root at its own timestamp that fans out to 2–3
 *   parallel tool branches (`wait_for: [root]`, `delay` + `tool_wait_ms`) joined by a final node
 *   waiting for all of them; branches extend the root's hash ids, so they share its prefix.
 * - applied: the reference's documented row (100 → 140 → 200 tokens, tool waits 0.5 s and 1.25 s)
 *   and 3 drawn sessions of 1–4 tool turns.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Prng } from "../src/util/prng.js";

export const FORMAT_FIXTURE_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "test",
  "fixtures",
  "formats",
);

type Row = Record<string, unknown>;

/** The row of the reference's test (`..._expands_rows_into_num_turns_plus_final_request`). */
export const APPLIED_COMPUTE_REFERENCE_ROW = {
  num_turns: 2,
  input_prompt_length: 100,
  assistant_response_length: [10, 20],
  tool_call_output_length: [30, 40],
  tool_call_latency: [0.5, 1.25],
  final_assistant_response_length: 50,
} as const;

function deltaRows(rng: Prng): Row[] {
  let nextId = 1;
  const ids = (tokens: number): number[] => Array.from({ length: Math.ceil(tokens / 16) }, () => nextId++);
  const sessions: Row[][] = [];
  for (let s = 0; s < 4; s++) {
    const turns = rng.nextIntInclusive(3, 4);
    const rows: Row[] = [];
    for (let k = 0; k < turns; k++) {
      const input = k === 0 ? rng.nextIntInclusive(40, 120) : rng.nextIntInclusive(8, 40);
      const row: Row = {
        session_id: `s${s}`,
        input_length: input,
        output_length: rng.nextIntInclusive(4, 24),
      };
      if (k === 0) row.timestamp = s * 40 + rng.nextIntInclusive(0, 20);
      else row.delay = rng.nextIntInclusive(0, 3) * 50;
      row.hash_ids = ids(input);
      rows.push(row);
    }
    sessions.push(rows);
  }
  // Interleave the sessions' turns (turn order within a session is file order).
  const out: Row[] = [];
  for (let k = 0; k < 4; k++) for (const rows of sessions) if (k < rows.length) out.push(rows[k]);
  return out;
}

function agenticRows(rng: Prng): Row[] {
  let nextId = 1;
  const out: Row[] = [];
  for (let run = 0; run < 3; run++) {
    const root = Array.from({ length: rng.nextIntInclusive(3, 6) }, () => nextId++);
    const rootId = `run${run}-root`;
    out.push({
      request_id: rootId,
      session_id: `run${run}`,
      timestamp: 1000 + run * 150 + rng.nextIntInclusive(0, 50),
      input_length: root.length * 16,
      output_length: rng.nextIntInclusive(4, 16),
      hash_ids: root,
      prefix_reset: run === 0,
    });
    const branches: string[] = [];
    const fan = rng.nextIntInclusive(2, 3);
    for (let b = 0; b < fan; b++) branches.push(`run${run}-tool${b}`);
    out[out.length - 1].branches = branches;
    let longest = root;
    for (const id of branches) {
      const hashes = [...root, ...Array.from({ length: rng.nextIntInclusive(1, 3) }, () => nextId++)];
      if (hashes.length > longest.length) longest = hashes;
      out.push({
        request_id: id,
        session_id: `run${run}`,
        wait_for: [rootId],
        delay: rng.nextIntInclusive(0, 20),
        tool_wait_ms: rng.nextIntInclusive(10, 200),
        input_length: hashes.length * 16 - rng.nextIntInclusive(0, 8),
        output_length: rng.nextIntInclusive(4, 40),
        hash_ids: hashes,
      });
    }
    const join = [...longest, nextId++];
    out.push({
      request_id: `run${run}-join`,
      session_id: `run${run}`,
      wait_for: branches,
      tool_wait_ms: rng.nextIntInclusive(0, 100),
      input_length: join.length * 16,
      output_length: rng.nextIntInclusive(4, 16),
      hash_ids: join,
    });
  }
  return out;
}

function appliedRows(rng: Prng): Row[] {
  const out: Row[] = [APPLIED_COMPUTE_REFERENCE_ROW];
  for (let s = 0; s < 3; s++) {
    const turns = rng.nextIntInclusive(1, 4);
    const list = (lo: number, hi: number): number[] =>
      Array.from({ length: turns }, () => rng.nextIntInclusive(lo, hi));
    out.push({
      num_turns: turns,
      input_prompt_length: rng.nextIntInclusive(200, 600),
      assistant_response_length: list(8, 64),
      tool_call_output_length: list(16, 200),
      tool_call_latency: list(0, 40).map((x) => x / 20),
      final_assistant_response_length: rng.nextIntInclusive(16, 64),
    });
  }
  return out;
}

/** The fixtures: file name → its JSONL text. */
export function formatFixtures(): Record<string, string> {
  const rng = new Prng(2026_0120);
  const text = (rows: Row[]): string => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";
  return {
    "mooncake-delta.jsonl": text(deltaRows(rng)),
    "agentic-mooncake.jsonl": text(agenticRows(rng)),
    "applied-compute-agentic.jsonl": text(appliedRows(rng)),
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(FORMAT_FIXTURE_DIR, { recursive: true });
  for (const [name, text] of Object.entries(formatFixtures()))
    writeFileSync(join(FORMAT_FIXTURE_DIR, name), text);
}
