/**
 * Generates `examples/sample_trace.jsonl`, a small deterministic Mooncake-format trace
 * (run: `node --import tsx scripts/make-example-trace.ts`).
 *
 * Shape: ~300 rows over ~120 s, ISL 200–8000, OSL 10–400, trace block size 512. Most single-turn
 * requests start with one of three shared "system prompt" hash-id prefixes; a few multi-turn sessions
 * (`session_id`) extend the previous turn's full blocks with new ids. Half of those sessions carry
 * authored `timestamp`s on later turns, the other half an explicit `delay` (think time, ms) instead.
 */
import { writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Prng } from "../src/util/prng.js";

const SEED = 20250101;
const BLOCK = 512;
const SPAN_MS = 120_000;
const SINGLE_TURN = 240;
const SESSIONS = 20;
const MIN_ISL = 200;
const MAX_ISL = 8000;

interface Row {
  session_id?: string;
  timestamp?: number;
  delay?: number;
  input_length: number;
  output_length: number;
  hash_ids: number[];
  request_id: string;
  /** Sort key only (not written). */
  order: number;
}

const rng = new Prng(SEED);
/** Shared prefixes: a long, a short and a mid-size system prompt. */
const SYSTEM_PROMPTS: number[][] = [
  [0, 1, 2],
  [3, 4],
  [5, 6, 7, 8, 9, 10],
];
let nextUniqueId = 100;

const logUniformInt = (lo: number, hi: number): number =>
  Math.round(Math.exp(Math.log(lo) + rng.nextFloat() * (Math.log(hi) - Math.log(lo))));

/** Picks a system prompt that fits in `isl` tokens (as full blocks), or none (25%). */
function pickPrefix(isl: number): number[] {
  const u = rng.nextFloat();
  const choice = u < 0.4 ? 0 : u < 0.6 ? 1 : u < 0.75 ? 2 : -1;
  if (choice < 0) return [];
  const prefix = SYSTEM_PROMPTS[choice];
  return prefix.length * BLOCK < isl ? prefix : [];
}

/** `keep` followed by fresh ids up to ceil(isl / BLOCK) ids. */
function extendIds(keep: number[], isl: number): number[] {
  const ids = keep.slice();
  const need = Math.ceil(isl / BLOCK);
  while (ids.length < need) ids.push(nextUniqueId++);
  return ids;
}

const rows: Row[] = [];
let requestCounter = 0;
const requestId = (): string => `req-${String(requestCounter++).padStart(4, "0")}`;

// Arrival times of single-turn requests and session starts: Poisson over the span.
const starts = SINGLE_TURN + SESSIONS;
const meanGap = SPAN_MS / starts;
let t = 0;
const arrivals: number[] = [];
for (let i = 0; i < starts; i++) {
  arrivals.push(Math.round(t));
  t += rng.nextExponential(meanGap);
}
// Spread the session starts among the arrivals deterministically.
const sessionSlots = new Set<number>();
while (sessionSlots.size < SESSIONS) sessionSlots.add(rng.nextIntInclusive(0, Math.floor(starts * 0.8)));

let sessionNo = 0;
for (let a = 0; a < starts; a++) {
  const at = arrivals[a];
  if (!sessionSlots.has(a)) {
    const isl = logUniformInt(MIN_ISL, MAX_ISL);
    rows.push({
      timestamp: at,
      input_length: isl,
      output_length: logUniformInt(10, 400),
      hash_ids: extendIds(pickPrefix(isl), isl),
      request_id: requestId(),
      order: at,
    });
    continue;
  }
  // Multi-turn session: 2–5 turns, each prompt = previous prompt + previous answer + new user text.
  const sessionId = `session-${sessionNo++}`;
  const useDelay = sessionNo % 2 === 0;
  const turns = rng.nextIntInclusive(2, 5);
  let isl = rng.nextIntInclusive(500, 3000);
  let ids = extendIds(pickPrefix(isl), isl);
  let nominal = at;
  for (let k = 0; k < turns; k++) {
    const osl = logUniformInt(10, 400);
    const row: Row = {
      session_id: sessionId,
      input_length: isl,
      output_length: osl,
      hash_ids: ids,
      request_id: requestId(),
      order: nominal,
    };
    const think = rng.nextIntInclusive(1000, 15_000);
    if (k === 0) row.timestamp = at;
    else if (useDelay) row.delay = think;
    else row.timestamp = Math.round(nominal);
    rows.push(row);
    // Next turn: keep this prompt's full blocks, then new ids for answer + new user message.
    const nextIsl = isl + osl + rng.nextIntInclusive(100, 1500);
    if (nextIsl > MAX_ISL) break;
    ids = extendIds(ids.slice(0, Math.floor(isl / BLOCK)), nextIsl);
    isl = nextIsl;
    nominal += 2000 + osl * 20 + think; // rough service time + think time
  }
}

rows.sort((x, y) => x.order - y.order);
const lines = rows.map(({ order: _order, ...row }) => {
  const out: Record<string, unknown> = {};
  if (row.session_id !== undefined) out["session_id"] = row.session_id;
  if (row.timestamp !== undefined) out["timestamp"] = row.timestamp;
  if (row.delay !== undefined) out["delay"] = row.delay;
  out["input_length"] = row.input_length;
  out["output_length"] = row.output_length;
  out["hash_ids"] = row.hash_ids;
  out["request_id"] = row.request_id;
  return JSON.stringify(out);
});

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const target = resolve(root, "examples/sample_trace.jsonl");
const text = lines.join("\n") + "\n";
writeFileSync(target, text);
const last = rows.reduce((m, r) => Math.max(m, r.timestamp ?? 0), 0);
console.log(
  `wrote ${target}: ${rows.length} rows, ${sessionNo} multi-turn sessions, ` +
    `last timestamp ${(last / 1000).toFixed(1)} s, ${(text.length / 1024).toFixed(1)} KiB`,
);
