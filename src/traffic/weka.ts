/**
 * `format: weka` (`ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`: an AgentX / Weka JSON corpus, "lowered to Agentic Mooncake";
 * the reference's lowering is ai-dynamo/dynamo `lib/data-gen/src/weka.rs`; docs/traces.md "Weka"):
 * one JSON file per play (an agent run), a file or a directory searched recursively for `*.json`
 * (sorted by relative path, symlinks refused). A play lists requests (`type` `n` or `s`: `t`
 * seconds, `model`, `in`, `out`, `hash_ids` of `block_size` tokens, `api_time` seconds) and
 * subagents (`type: subagent`, `t`, `agent_id`, `duration_ms`, their own `requests`). It becomes a
 * dependency graph (traffic/agenticGraph.ts), as the reference lowers it:
 *  - **streams**: requests are grouped into conversation chains: a request continues the chain
 *    whose last prompt is a prefix of its own (same model, that request already ended), else it
 *    opens a new chain forked from the chain it shares the longest prefix with. The chain holding
 *    the play's first request is the play's root stream; a subagent's requests form streams of
 *    their own the same way.
 *  - **edges**: each request waits for its stream predecessor's completion plus the think time
 *    between them (`t` − predecessor's `t + api_time`); a forked chain's first request starts from
 *    its fork point (at that request's dispatch plus the recorded offset when it started while the
 *    fork point ran, else after its completion plus the gap); a subagent starts from the root-stream
 *    request just before it, and the first root-stream request at or after the subagent's end waits
 *    for every one of its streams' last requests.
 *  - **prompts**: hash ids are local to their file (the same id in two plays is two blocks); a
 *    partial last block is private to its request; `out: 0` is replayed as 1 token.
 * Differences from the reference's lowering are listed in docs/traces.md (Known differences).
 */
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { type AgenticNodes, buildAgenticTable } from "./agenticGraph.js";
import type { MooncakeLoadOptions } from "./mooncake/index.js";
import type { RequestTable } from "./requests.js";
import { describeValue, TraceError } from "./traceError.js";

/** How a subagent's request times relate to the subagent's own `t` (`traffic.source.nested_timestamp_basis`). */
export type WekaTimestampBasis = "auto" | "absolute" | "relative";

export interface WekaLoadOptions extends Pick<MooncakeLoadOptions, "engineBlockSize"> {
  /** Explicit `traffic.source.block_size`: must equal the corpus's; null = the corpus's. */
  readonly traceBlockSize: number | null;
  readonly nestedTimestampBasis: WekaTimestampBasis;
}

/** Requests are joined when their ends meet within this many seconds (float noise in the traces). */
const JOIN_EPSILON_S = 1e-6;

interface WekaRequest {
  /** `outer:<i>` or `outer:<i>:inner:<j>`: its place in the play. */
  readonly sourceId: string;
  readonly order: number;
  readonly t: number;
  readonly model: string;
  readonly input: number;
  readonly output: number;
  readonly hashIds: readonly number[];
  readonly apiTime: number;
}

const endOf = (r: WekaRequest): number => r.t + r.apiTime;
const byTime = (a: WekaRequest, b: WekaRequest): number =>
  a.t - b.t || a.order - b.order || (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0);

/** One lowered request: its graph node, as the table builder takes it. */
interface Node {
  readonly id: string;
  readonly session: string;
  readonly request: WekaRequest;
  /** Dependencies (request ids, all completions) and the delay after the last of them, ms; a root has none and `rootMs`. */
  waits: string[];
  delayMs: number;
  /** A root's release time, ms after the play's first request (NaN for a dependent node). */
  rootMs: number;
}

export async function loadWekaTrace(path: string, opts: WekaLoadOptions): Promise<RequestTable> {
  const files = collectFiles(path);
  if (files.length === 0) throw new TraceError(path, 0, "the Weka corpus holds no .json files");
  const plays = files.map((f) => readPlay(f.file, f.relative));
  const blockSize = plays[0].blockSize;
  for (const p of plays) {
    if (p.blockSize !== blockSize) {
      throw new TraceError(
        p.file,
        0,
        `block_size ${p.blockSize} differs from ${plays[0].file}'s ${blockSize}`,
        "block_size",
      );
    }
  }
  if (opts.traceBlockSize !== null && opts.traceBlockSize !== blockSize) {
    throw new TraceError(
      path,
      0,
      `traffic.source.block_size is ${opts.traceBlockSize} but the corpus's hash blocks are ${blockSize} tokens`,
      "block_size",
    );
  }

  const nodes: AgenticNodes = { path, ids: [], lines: [], waitFor: [] };
  const rowById = new Map<string, number>();
  const timestamp: number[] = [];
  const delay: number[] = [];
  const inputs: number[] = [];
  const outputs: number[] = [];
  const sessionIds: (string | null)[] = [];
  const ids: number[] = [];
  const idOffsets: number[] = [0];
  // Local hash ids: (file, id) → a global trace hash id; partial and missing blocks get fresh ones.
  const globalId = new Map<string, number>();
  let nextId = 1;
  const fresh = (): number => nextId++;

  for (const play of plays) {
    const lowered = lowerPlay(play, opts.nestedTimestampBasis);
    for (const n of lowered) {
      rowById.set(n.id, nodes.ids.length);
      nodes.ids.push(n.id);
      nodes.lines.push(0);
      nodes.waitFor.push(n.waits);
      // Every play starts at 0 (the plays of a corpus are independent recordings, replayed side by
      // side, as the reference does); its roots keep their offset within it.
      timestamp.push(Number.isNaN(n.rootMs) ? 0 : n.rootMs);
      delay.push(n.waits.length === 0 ? 0 : n.delayMs);
      const r = n.request;
      inputs.push(r.input);
      outputs.push(Math.max(1, r.output));
      sessionIds.push(n.session);
      const full = Math.floor(r.input / blockSize);
      for (let k = 0; k < full; k++) {
        const local = r.hashIds[k];
        if (local === undefined) {
          ids.push(fresh());
          continue;
        }
        const key = `${play.relative}\u0000${local}`;
        let g = globalId.get(key);
        if (g === undefined) {
          g = fresh();
          globalId.set(key, g);
        }
        ids.push(g);
      }
      if (r.input % blockSize !== 0) ids.push(fresh());
      idOffsets.push(ids.length);
    }
  }
  if (nextId > 0xffffffff)
    throw new TraceError(path, 0, "the corpus has more distinct blocks than fleetsim can index");

  return buildAgenticTable(
    nodes,
    rowById,
    {
      timestamp: Float64Array.from(timestamp),
      delay: Float64Array.from(delay),
      inputLength: Int32Array.from(inputs),
      outputLength: Int32Array.from(outputs),
      ids: Uint32Array.from(ids),
      idOffsets: Int32Array.from(idOffsets),
      sessionIds,
    },
    blockSize,
    opts.engineBlockSize,
  );
}

// ---------------------------------------------------------------------------------------------
// Reading

interface Play {
  readonly file: string;
  readonly relative: string;
  readonly id: string;
  readonly blockSize: number;
  /** Top-level requests, and subagents with their outer index. */
  readonly requests: WekaRequest[];
  readonly subagents: {
    readonly outer: number;
    readonly t: number;
    readonly agentId: string;
    readonly durationMs: number | null;
    readonly requests: WekaRequest[];
  }[];
}

function collectFiles(path: string): { file: string; relative: string }[] {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    throw new TraceError(path, 0, "Weka source not found");
  }
  if (st.isSymbolicLink()) throw new TraceError(path, 0, "a Weka source may not be a symlink");
  if (st.isFile()) return [{ file: path, relative: path.split(sep).pop()! }];
  if (!st.isDirectory())
    throw new TraceError(path, 0, "a Weka source is a .json file or a directory of them");
  const out: { file: string; relative: string }[] = [];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const s = lstatSync(full);
      if (s.isSymbolicLink()) throw new TraceError(full, 0, "a Weka corpus may not contain symlinks");
      if (s.isDirectory()) visit(full);
      else if (s.isFile() && name.endsWith(".json"))
        out.push({ file: full, relative: relative(path, full).split(sep).join("/") });
    }
  };
  visit(path);
  return out.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
}

function readPlay(file: string, rel: string): Play {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new TraceError(file, 0, `not a JSON document (${(err as Error).message})`);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc))
    throw new TraceError(file, 0, "expected a JSON object (one play)");
  const d = doc as Record<string, unknown>;
  const id = d["id"];
  if (typeof id !== "string" || id.trim() === "")
    throw new TraceError(file, 0, `expected a non-empty string, got ${describeValue(id)}`, "id");
  const bs = d["block_size"];
  if (typeof bs !== "number" || !Number.isInteger(bs) || bs <= 0) {
    throw new TraceError(file, 0, `expected a positive integer, got ${describeValue(bs)}`, "block_size");
  }
  if (d["hash_id_scope"] !== "local") {
    throw new TraceError(
      file,
      0,
      `expected "local", got ${describeValue(d["hash_id_scope"])}`,
      "hash_id_scope",
    );
  }
  const entries = d["requests"];
  if (!Array.isArray(entries))
    throw new TraceError(file, 0, `expected an array, got ${describeValue(entries)}`, "requests");
  const requests: WekaRequest[] = [];
  const subagents: Play["subagents"][number][] = [];
  entries.forEach((e, i) => {
    const at = `requests[${i}]`;
    if (typeof e !== "object" || e === null)
      throw new TraceError(file, 0, `expected an object, got ${describeValue(e)}`, at);
    const entry = e as Record<string, unknown>;
    if (entry["type"] === "subagent") {
      const t = entry["t"];
      if (typeof t !== "number" || !Number.isFinite(t) || t < 0)
        throw new TraceError(file, 0, `expected seconds ≥ 0, got ${describeValue(t)}`, `${at}.t`);
      const agentId = entry["agent_id"];
      if (typeof agentId !== "string" || agentId.trim() === "")
        throw new TraceError(
          file,
          0,
          `expected a non-empty string, got ${describeValue(agentId)}`,
          `${at}.agent_id`,
        );
      const dur = entry["duration_ms"];
      const inner = entry["requests"];
      if (!Array.isArray(inner))
        throw new TraceError(file, 0, `expected an array, got ${describeValue(inner)}`, `${at}.requests`);
      subagents.push({
        outer: i,
        t,
        agentId,
        durationMs: typeof dur === "number" && Number.isFinite(dur) ? Math.max(0, dur) : null,
        requests: inner.map((x, j) =>
          readRequest(file, `${at}.requests[${j}]`, x, `outer:${i}:inner:${j}`, j, false),
        ),
      });
    } else {
      requests.push(readRequest(file, at, entry, `outer:${i}`, i, true));
    }
  });
  if (requests.length === 0) throw new TraceError(file, 0, "the play has no top-level requests", "requests");
  return { file, relative: rel, id, blockSize: bs, requests, subagents };
}

function readRequest(
  file: string,
  at: string,
  e: unknown,
  sourceId: string,
  order: number,
  outer: boolean,
): WekaRequest {
  if (typeof e !== "object" || e === null)
    throw new TraceError(file, 0, `expected an object, got ${describeValue(e)}`, at);
  const r = e as Record<string, unknown>;
  const type = r["type"];
  if (type !== "n" && type !== "s") {
    throw new TraceError(
      file,
      0,
      `expected "n", "s"${outer ? ' or "subagent"' : ""}, got ${describeValue(type)}`,
      `${at}.type`,
    );
  }
  const num = (key: string, min: number, integer: boolean): number => {
    const v = r[key];
    if (typeof v !== "number" || !Number.isFinite(v) || v < min || (integer && !Number.isInteger(v))) {
      throw new TraceError(
        file,
        0,
        `expected ${integer ? "an integer" : "a number"} ≥ ${min}, got ${describeValue(v)}`,
        `${at}.${key}`,
      );
    }
    return v;
  };
  const t = num("t", 0, false);
  const model = r["model"];
  if (typeof model !== "string" || model.trim() === "")
    throw new TraceError(file, 0, `expected a non-empty string, got ${describeValue(model)}`, `${at}.model`);
  const input = num("in", 1, true);
  const output = num("out", 0, true);
  const hashes = r["hash_ids"] ?? [];
  if (!Array.isArray(hashes) || hashes.some((h) => typeof h !== "number" || !Number.isInteger(h) || h < 0)) {
    throw new TraceError(
      file,
      0,
      `expected an array of non-negative integers, got ${describeValue(hashes)}`,
      `${at}.hash_ids`,
    );
  }
  const api = r["api_time"];
  if (api !== undefined && api !== null && (typeof api !== "number" || !Number.isFinite(api))) {
    throw new TraceError(file, 0, `expected seconds, got ${describeValue(api)}`, `${at}.api_time`);
  }
  return {
    sourceId,
    order,
    t,
    model,
    input,
    output,
    hashIds: hashes as number[],
    apiTime: typeof api === "number" ? Math.max(0, api) : 0,
  };
}

// ---------------------------------------------------------------------------------------------
// Lowering

interface Chain {
  readonly requests: WekaRequest[];
  /** The request it forked from (null for the first chain or one that shares no prefix). */
  readonly forkFrom: WekaRequest | null;
  tail: WekaRequest | null;
}

const lcp = (a: readonly number[], b: readonly number[]): number => {
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  return k;
};

/** Groups requests into chains of one conversation each (the first chain holds the earliest request). */
function detectChains(requests: readonly WekaRequest[]): Chain[] {
  const sorted = [...requests].sort(byTime);
  const chains: Chain[] = [];
  for (const r of sorted) {
    if (chains.length === 0) {
      chains.push({ requests: [r], forkFrom: null, tail: r.hashIds.length > 0 ? r : null });
      continue;
    }
    if (r.hashIds.length === 0) {
      chains[0].requests.push(r);
      continue;
    }
    // Extension: the longest chain tail that is a prefix of this prompt, same model, already ended.
    let target = -1;
    let best = 0;
    chains.forEach((c, i) => {
      const tail = c.tail;
      if (tail === null) return;
      const n = tail.hashIds.length;
      if (n === 0 || n > r.hashIds.length || n <= best || tail.model !== r.model) return;
      if (endOf(tail) > r.t + JOIN_EPSILON_S || lcp(tail.hashIds, r.hashIds) !== n) return;
      target = i;
      best = n;
    });
    if (target < 0 && chains.every((c) => c.tail === null)) target = 0;
    if (target >= 0) {
      chains[target].requests.push(r);
      chains[target].tail = r;
      continue;
    }
    // A fork from the chain sharing the longest prefix (ties: the longer tail, then the earlier chain).
    let parent: Chain | null = null;
    let key = [0, 0];
    for (const c of chains) {
      if (c.tail === null) continue;
      const depth = lcp(c.tail.hashIds, r.hashIds);
      if (depth > 0 && (depth > key[0] || (depth === key[0] && c.tail.hashIds.length > key[1]))) {
        parent = c;
        key = [depth, c.tail.hashIds.length];
      }
    }
    chains.push({ requests: [r], forkFrom: parent?.tail ?? null, tail: r });
  }
  return chains;
}

interface Stream {
  readonly session: string;
  readonly requests: readonly WekaRequest[];
  /** Where its first request starts from (null: the play root's dispatch, for a disjoint chain). */
  readonly forkFrom: WekaRequest | null;
}

function lowerPlay(play: Play, basis: WekaTimestampBasis): Node[] {
  const prefix = `weka:${play.relative}:`;
  const idOf = (r: WekaRequest): string => `${prefix}${r.sourceId}`;
  const streams: Stream[] = [];
  const rootChains = detectChains(play.requests);
  rootChains.forEach((c, i) => {
    streams.push({
      session: `${prefix}session:${i === 0 ? "root" : `worker:${i - 1}`}`,
      requests: c.requests,
      forkFrom: c.forkFrom,
    });
  });
  const root = streams[0];
  const joins = new Map<string, string[]>();
  const sorted = [...root.requests].sort(byTime);
  const topLevel = [...play.requests].sort((a, b) => a.order - b.order);
  for (const sub of play.subagents) {
    const spawn = [...sorted].reverse().find((r) => r.order < sub.outer);
    if (spawn === undefined) {
      throw new TraceError(
        play.file,
        0,
        `subagent '${sub.agentId}' comes before any top-level request (an orphan subagent)`,
        `requests[${sub.outer}]`,
      );
    }
    const inner = sub.requests.map((r) => {
      const shift = basis === "relative" || (basis === "auto" && r.t + JOIN_EPSILON_S < sub.t);
      return shift ? { ...r, t: r.t + sub.t } : r;
    });
    if (inner.length === 0) continue;
    const chains = detectChains(inner);
    const first = streams.length;
    chains.forEach((c, i) => {
      streams.push({
        session: `${prefix}session:subagent:${sub.outer}:${sub.agentId}${i === 0 ? "" : `:worker:${i - 1}`}`,
        requests: c.requests,
        // The subagent's first chain starts from its spawn point; its forks from their fork points.
        forkFrom: i === 0 ? spawn : c.forkFrom,
      });
    });
    const end =
      sub.durationMs !== null ? sub.t + sub.durationMs / 1000 : Math.max(sub.t, ...inner.map(endOf));
    // The parent resumes with the first top-level request at or after the subagent's end (in
    // whichever top-level stream it was detected).
    const joiner = topLevel.find((r) => r.order > sub.outer && r.t + JOIN_EPSILON_S >= end);
    if (joiner !== undefined) {
      const lasts = streams.slice(first).map((s) => idOf(s.requests[s.requests.length - 1]));
      joins.set(joiner.sourceId, [...(joins.get(joiner.sourceId) ?? []), ...lasts]);
    }
  }

  const playStart = Math.min(...streams.flatMap((s) => s.requests.map((r) => r.t)));
  const rootFirst = sorted[0];
  const nodeBySource = new Map<string, Node>();
  const nodes: Node[] = [];
  for (const s of streams) {
    s.requests.forEach((r, k) => {
      const n: Node = {
        id: idOf(r),
        session: s.session,
        request: r,
        waits: [],
        delayMs: 0,
        rootMs: Number.NaN,
      };
      if (k > 0) {
        const prev = s.requests[k - 1];
        n.waits.push(idOf(prev));
        n.delayMs = Math.max(0, r.t - endOf(prev)) * 1000;
      }
      nodes.push(n);
      nodeBySource.set(r.sourceId, n);
    });
  }
  for (const n of nodes) {
    for (const w of joins.get(n.request.sourceId) ?? []) if (!n.waits.includes(w)) n.waits.push(w);
  }
  // First requests of streams, in stream order (a fork point belongs to an earlier stream or to
  // an earlier request of the same play, so its own release is known when it is needed).
  const release = (n: Node, from: WekaRequest | null): void => {
    const r = n.request;
    if (n === nodeBySource.get(rootFirst.sourceId)) {
      n.rootMs = (r.t - playStart) * 1000;
      return;
    }
    const parentReq = from ?? rootFirst;
    const parent = nodeBySource.get(parentReq.sourceId)!;
    if (from !== null && r.t >= endOf(parentReq)) {
      // Started after its fork point ended: after that completion plus the gap.
      n.waits.push(parent.id);
      n.delayMs = (r.t - endOf(parentReq)) * 1000;
      return;
    }
    // Started while its fork point ran (or a disjoint chain): at the fork point's dispatch plus the
    // recorded offset, i.e. when the fork point is released, later by that offset.
    const offsetMs = Math.max(0, r.t - parentReq.t) * 1000;
    if (n.waits.length > 0) {
      // Also a subagent's join target: released when the subagents it waits for end (the graph
      // has one delay per node, not a second floor at the fork point's dispatch; Known differences).
      for (const w of parent.waits) if (!n.waits.includes(w)) n.waits.push(w);
    } else if (parent.waits.length === 0) {
      n.rootMs = parent.rootMs + offsetMs;
    } else {
      n.waits.push(...parent.waits);
      n.delayMs = parent.delayMs + offsetMs;
    }
  };
  for (const s of streams) release(nodeBySource.get(s.requests[0].sourceId)!, s.forkFrom);
  return nodes;
}
