/**
 * `format: applied_compute_agentic` (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`, the AISimulate user guide §11.9): the
 * agentic workload traces of Applied Compute's `trie` (github.com/applied-compute/trie,
 * docs/traces.md). A row is one agent session of token lengths and tool waits:
 *
 *   {num_turns, input_prompt_length, assistant_response_length[num_turns],
 *    tool_call_output_length[num_turns], tool_call_latency[num_turns] (s),
 *    final_assistant_response_length}
 *
 * and becomes `num_turns + 1` requests (the reference's `from_applied_compute_agentic`): turn 0's
 * prompt is `input_prompt_length` tokens, turn i + 1's is turn i's plus the assistant's response
 * and the tool's output (`L_{i+1} = L_i + assistant[i] + tool[i]`); turn i outputs
 * `assistant_response_length[i]`, the last turn `final_assistant_response_length`; turn i + 1 is
 * ready `tool_call_latency[i] · 1000` ms after turn i ended. Prompts are hash ids of
 * `block_size` tokens, one new id per block (a counter from 1 over the whole file), and a
 * session's ids only grow, so turn i's blocks are a prefix of turn i + 1's. The rows carry no
 * timestamps: the format replays under `concurrency` load only (config rule).
 */
import { hashPrompts } from "./blockHashes.js";
import { GrowableI32, TraceColumns } from "./columns.js";
import { readJsonlLines } from "./jsonlReader.js";
import type { MooncakeLoadOptions } from "./mooncake/index.js";
import type { RequestTable } from "./requests.js";
import { describeValue, parseJsonObject, TraceError } from "./traceError.js";

const MAX_I32 = 0x7fffffff;
const TWO_POW_32 = 4294967296;

type Row = Readonly<Record<string, unknown>>;
type LoadOptions = Pick<MooncakeLoadOptions, "traceBlockSize" | "engineBlockSize">;

/** One row, validated. */
interface Session {
  readonly turns: number;
  readonly input: number;
  readonly assistant: number[];
  readonly tool: number[];
  readonly latencyS: number[];
  readonly final: number;
}

class RowReader {
  constructor(
    private readonly path: string,
    private readonly line: number,
    private readonly row: Row,
  ) {}

  error(field: string, detail: string): TraceError {
    return new TraceError(this.path, this.line, detail, field);
  }

  count(key: string, min: number): number {
    const v = this.row[key];
    if (v === undefined || v === null) throw this.error(key, "required field is missing");
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
      throw this.error(
        key,
        `expected ${min > 0 ? "a positive" : "a non-negative"} integer, got ${describeValue(v)}`,
      );
    }
    if (v > MAX_I32) throw this.error(key, `value ${v} is too large (max ${MAX_I32})`);
    return v;
  }

  /** An array of `n` entries, each checked by `ok` (`what` names the entry's type). */
  list(key: string, n: number, what: string, ok: (v: unknown) => boolean): number[] {
    const v = this.row[key];
    if (v === undefined || v === null) throw this.error(key, "required field is missing");
    if (!Array.isArray(v)) throw this.error(key, `expected an array of ${what}s, got ${describeValue(v)}`);
    if (v.length !== n) throw this.error(key, `expected num_turns = ${n} entries, got ${v.length}`);
    for (let k = 0; k < n; k++) {
      if (!ok(v[k])) throw this.error(key, `element ${k}: expected a ${what}, got ${describeValue(v[k])}`);
    }
    return v as number[];
  }
}

const isCount = (v: unknown): boolean =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_I32;
const isSeconds = (v: unknown): boolean => typeof v === "number" && Number.isFinite(v) && v >= 0;

function readSession(path: string, line: number, text: string): Session {
  const r = new RowReader(path, line, parseJsonObject(path, line, text));
  const turns = r.count("num_turns", 0);
  const input = r.count("input_prompt_length", 1);
  const assistant = r.list("assistant_response_length", turns, "non-negative integer", isCount);
  const tool = r.list("tool_call_output_length", turns, "non-negative integer", isCount);
  const latencyS = r.list("tool_call_latency", turns, "finite non-negative number of seconds", isSeconds);
  const final = r.count("final_assistant_response_length", 0);
  let total = input;
  for (let i = 0; i < turns; i++) {
    total += assistant[i] + tool[i];
    if (total > MAX_I32) {
      throw r.error(
        "tool_call_output_length",
        `turn ${i + 1}'s prompt would be ${total} tokens, more than ${MAX_I32}`,
      );
    }
  }
  return { turns, input, assistant, tool, latencyS, final };
}

export async function loadAppliedComputeAgenticTrace(path: string, opts: LoadOptions): Promise<RequestTable> {
  const T = opts.traceBlockSize;
  const E = opts.engineBlockSize;
  const { inputLength, outputLength, session, turn, delay, ids, idOffsets } = new TraceColumns();
  const sessionIds: string[] = [];
  const sessionFirstRow = new GrowableI32();
  // The next unused hash id, over the whole file (the reference's `next_unique_hash`, from 1).
  let nextId = 1;
  const sessionIdsOfRow: number[] = [];

  await readJsonlLines(path, (text, line) => {
    const s = readSession(path, line, text);
    const index = sessionIds.length;
    // The reference names a session by its 1-based line.
    sessionIds.push(`applied_compute_agentic_session_${line}`);
    sessionFirstRow.push(inputLength.length);
    sessionIdsOfRow.length = 0;
    let length = s.input;
    let delayMs = 0;
    for (let k = 0; k <= s.turns; k++) {
      // The prompt's ids: the session's so far, extended to cover `length` tokens.
      const blocks = Math.ceil(length / T);
      while (sessionIdsOfRow.length < blocks) sessionIdsOfRow.push(nextId++ % TWO_POW_32);
      for (let b = 0; b < blocks; b++) ids.push(sessionIdsOfRow[b]);
      idOffsets.push(ids.length);
      inputLength.push(length);
      outputLength.push(k < s.turns ? s.assistant[k] : s.final);
      session.push(index);
      turn.push(k);
      delay.push(delayMs);
      if (k < s.turns) {
        length += s.assistant[k] + s.tool[k];
        delayMs = s.latencyS[k] * 1000;
      }
    }
  });

  const count = inputLength.length;
  if (count === 0) throw new TraceError(path, 0, "trace has no rows");
  const sessions = sessionIds.length;
  const firstRows = sessionFirstRow.toArray();
  const nextTurnRow = new Int32Array(count).fill(-1);
  for (let s = 0; s < sessions; s++) {
    const end = s + 1 < sessions ? firstRows[s + 1] : count;
    for (let r = firstRows[s]; r < end - 1; r++) nextTurnRow[r] = r + 1;
  }
  const inputs = inputLength.toArray();
  const packed = hashPrompts(count, ids.data, idOffsets.data, inputs, T, E);
  return {
    count,
    // No arrival times: the rows replay under concurrency load, sessions in file order.
    timestampMs: new Float64Array(count).fill(Number.NaN),
    inputLength: inputs,
    outputLength: outputLength.toArray(),
    session: session.toArray(),
    turn: turn.toArray(),
    delayAfterPreviousMs: delay.toArray(),
    blockOffsets: packed.offsets,
    blockHashes: packed.hashes,
    engineBlockSize: E,
    requestIds: new Array<string | null>(count).fill(null),
    sessionIds,
    sessionCount: sessions,
    sessionFirstRow: firstRows,
    nextTurnRow,
  };
}
