/**
 * Multi-turn synthetic sessions (`traffic.source.type: synthetic-session`, `ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`;
 * docs/traffic.md §Sessions). Each session has `turns` requests; turn k's prompt is the previous
 * turn's prompt, its output and `new_input_tokens_per_turn` new tokens:
 * `L_0 = in_0`, `L_k = L_{k-1} + out_{k-1} + in_k` (the reference's engine-stack test: 8 new / 2
 * out per turn gives prompts 8, 18, 28). So every turn's full blocks are a prefix of the next
 * turn's, and prefix caching / the KV router see the session's own history.
 *
 * - A session is one stream of engine blocks (its last prompt); turn k owns the stream's first
 *   `⌊L_k / E⌋` block hashes. Stream blocks are unique to the session, except a shared group prefix:
 * - `shared_prefix_ratio > 0` (with `prefix_groups > 0`): each session draws a group uniformly, and
 *   its first `min(⌊L_0/E⌋, round(⌈L_0/E⌉ · ratio))` blocks are the group's (the mocker's
 *   synthetic rule, `ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`, applied to the first turn's prompt, which every later turn
 *   extends; only full blocks of the first prompt, so a shared block never holds session output).
 * - The block that holds the previous turn's output tokens is a fresh prompt block of the next
 *   turn: fleetsim's engine hashes generated tokens per request (docs/architecture.md, Hashes), so
 *   those tokens are recomputed, not hit, like a Mooncake session trace's.
 * - Turn 0 of session s arrives at `firstTurnMs[s]` (NaN under closed loop); turn k+1 is ready
 *   `inter_turn_delay_ms` after turn k finished (sim/arrivals.ts), so a session never has more than
 *   one request in flight. Rows are session-major (row = s · turns + k).
 * - Draws from `Prng(seed)`, per session in order: the group (when sharing), then per turn the new
 *   input length and the output length.
 */
import { Prng } from "../../util/prng.js";
import { checkLengthSpec, LengthSampler, type LengthSpec, MAX_LENGTH } from "../lengthDistribution.js";
import { type RequestTable, sessionRows, sessionTable } from "../requests.js";
import { GROUP_VALUE_BASE, SEQUENCE_HASH_SEED, UniqueIds, writeChain } from "./hashes.js";

export interface SyntheticSessionOptions {
  readonly sessions: number;
  readonly turns: number;
  readonly newInput: LengthSpec;
  readonly output: LengthSpec;
  readonly sharedPrefixRatio: number;
  readonly prefixGroups: number;
  readonly interTurnDelayMs: number;
  readonly engineBlockSize: number;
  readonly seed: number;
  /** First-turn arrival of each session (NaN under closed loop); length `sessions`. */
  readonly firstTurnMs: Float64Array;
}

export function makeSessionTable(opts: SyntheticSessionOptions): RequestTable {
  const { sessions: S, turns: T, engineBlockSize: E } = opts;
  if (!(Number.isInteger(S) && S >= 0)) throw new RangeError(`bad session count ${S}`);
  if (!(Number.isInteger(T) && T >= 1)) throw new RangeError(`bad turn count ${T}`);
  if (S * T > 0x7fffffff) throw new RangeError(`too many requests (${S} sessions × ${T} turns)`);
  if (!(Number.isInteger(E) && E > 0)) throw new RangeError(`bad engine block size ${E}`);
  if (opts.firstTurnMs.length !== S) throw new RangeError("firstTurnMs must have one entry per session");
  const ratio = opts.sharedPrefixRatio;
  if (!(ratio >= 0 && ratio <= 1)) throw new RangeError(`sharedPrefixRatio must be in [0, 1], got ${ratio}`);
  const delay = opts.interTurnDelayMs;
  if (!(Number.isFinite(delay) && delay >= 0)) throw new RangeError(`bad inter-turn delay ${delay}`);
  checkLengthSpec(opts.newInput, 1, "new input per turn");
  checkLengthSpec(opts.output, 1, "output per turn");
  const sharing = ratio > 0 && opts.prefixGroups > 0;

  const count = S * T;
  const rng = new Prng(opts.seed);
  const newIn = new LengthSampler(opts.newInput, rng);
  const out = new LengthSampler(opts.output, rng);
  const rows = sessionRows(count);
  const { timestampMs, inputLength, outputLength, session, turn, delayAfterPreviousMs, nextTurnRow } = rows;
  const { blockOffsets } = rows;
  const group = new Int32Array(S);
  let total = 0;
  for (let s = 0; s < S; s++) {
    group[s] = sharing ? rng.nextIntInclusive(0, opts.prefixGroups - 1) : -1;
    let len = 0;
    for (let k = 0; k < T; k++) {
      const r = s * T + k;
      len += (k === 0 ? 0 : outputLength[r - 1]) + newIn.next();
      if (len > MAX_LENGTH)
        throw new RangeError(`session ${s} turn ${k}: prompt of ${len} tokens is too long`);
      inputLength[r] = len;
      outputLength[r] = out.next();
      blockOffsets[r] = total;
      total += Math.floor(len / E);
      if (total > 0x7fffffff) throw new RangeError(`too many engine blocks (${total})`);
    }
  }
  blockOffsets[count] = total;

  const blockHashes = new Float64Array(total);
  const ids = new UniqueIds();
  let stream = new Float64Array(64);
  for (let s = 0; s < S; s++) {
    const first = s * T;
    const last = first + T - 1;
    const blocks = Math.floor(inputLength[last] / E);
    if (stream.length < blocks) stream = new Float64Array(Math.max(blocks, stream.length * 2));
    const firstLen = inputLength[first];
    const shared = sharing
      ? Math.min(Math.floor(firstLen / E), Math.round(Math.ceil(firstLen / E) * ratio))
      : 0;
    const h = writeChain(stream, 0, shared, SEQUENCE_HASH_SEED, GROUP_VALUE_BASE + group[s], 0, E);
    const own = blocks - shared;
    if (own > 0) writeChain(stream, shared, own, h, ids.take(own), 1, E);
    for (let r = first; r <= last; r++) {
      blockHashes.set(stream.subarray(0, blockOffsets[r + 1] - blockOffsets[r]), blockOffsets[r]);
    }
  }

  timestampMs.fill(Number.NaN);
  const sessionFirstRow = new Int32Array(S);
  const sessionIds: string[] = new Array<string>(S);
  for (let s = 0; s < S; s++) {
    sessionFirstRow[s] = s * T;
    sessionIds[s] = `session_${s}`;
    timestampMs[s * T] = opts.firstTurnMs[s];
    for (let k = 0; k < T; k++) {
      const r = s * T + k;
      session[r] = s;
      turn[r] = k;
      delayAfterPreviousMs[r] = k === 0 ? 0 : delay;
      nextTurnRow[r] = k === T - 1 ? -1 : r + 1;
    }
  }
  return sessionTable(rows, {
    blockHashes,
    engineBlockSize: E,
    requestIds: new Array<string | null>(count).fill(null),
    sessionIds,
    sessionFirstRow,
  });
}

/** Group each session drew (−1 without sharing), replaying the draws (tests, diagnostics). */
export function sessionGroups(opts: SyntheticSessionOptions): Int32Array {
  const rng = new Prng(opts.seed);
  const newIn = new LengthSampler(opts.newInput, rng);
  const out = new LengthSampler(opts.output, rng);
  const sharing = opts.sharedPrefixRatio > 0 && opts.prefixGroups > 0;
  const group = new Int32Array(opts.sessions);
  for (let s = 0; s < opts.sessions; s++) {
    group[s] = sharing ? rng.nextIntInclusive(0, opts.prefixGroups - 1) : -1;
    for (let k = 0; k < opts.turns; k++) {
      newIn.next();
      out.next();
    }
  }
  return group;
}
