/**
 * Multi-turn synthetic sessions (`traffic.source.type: synthetic-session`, `ai-dynamo/aisimulate@207e5c9:python/aisimulate/src/aisimulate/config/traffic.py`;
 * docs/traffic.md §Sessions): each turn's prompt is the previous prompt + its output + new input
 * (so it extends its session's blocks), a later turn arrives `inter_turn_delay_ms` after the
 * previous one finished (at most one request in flight per session), `concurrency` counts active
 * sessions, `shared_prefix_ratio`/`prefix_groups` share a prefix across sessions, and the
 * reference's validation rules hold.
 */
import { describe, expect, it } from "vitest";
import { predict } from "../../src/api/replay.js";
import type { PerRequestRecord } from "../../src/report/perRequest.js";
import { arrivalTimes } from "../../src/traffic/synthetic/index.js";
import {
  makeSessionTable,
  type SyntheticSessionOptions,
  sessionGroups,
} from "../../src/traffic/synthetic/sessions.js";
import { issueAt, loadError, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";

const E = 16;

const opts = (o: Partial<SyntheticSessionOptions> = {}): SyntheticSessionOptions => {
  const sessions = o.sessions ?? 6;
  return {
    sessions,
    turns: 4,
    newInput: { distribution: "fixed", value: 100 },
    output: { distribution: "fixed", value: 30 },
    sharedPrefixRatio: 0,
    prefixGroups: 0,
    interTurnDelayMs: 250,
    engineBlockSize: E,
    seed: 42,
    firstTurnMs: new Float64Array(sessions).fill(Number.NaN),
    ...o,
  };
};

function hashes(t: ReturnType<typeof makeSessionTable>, row: number): Float64Array {
  return t.blockHashes.subarray(t.blockOffsets[row], t.blockOffsets[row + 1]);
}

describe("makeSessionTable", () => {
  it("prompts grow by output + new input per turn (the reference's 8 new / 2 out ⇒ 8, 18, 28)", () => {
    const t = makeSessionTable(
      opts({
        sessions: 2,
        turns: 3,
        newInput: { distribution: "fixed", value: 8 },
        output: { distribution: "fixed", value: 2 },
      }),
    );
    expect(Array.from(t.inputLength)).toEqual([8, 18, 28, 8, 18, 28]);
    expect(Array.from(t.outputLength)).toEqual([2, 2, 2, 2, 2, 2]);
    expect(Array.from(t.turn)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(Array.from(t.session)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(Array.from(t.nextTurnRow)).toEqual([1, 2, -1, 4, 5, -1]);
    expect(Array.from(t.sessionFirstRow)).toEqual([0, 3]);
    expect(t.sessionIds).toEqual(["session_0", "session_1"]);
  });

  it("turn k's blocks are a prefix of turn k+1's; sessions share nothing without prefix groups", () => {
    const t = makeSessionTable(opts());
    const owner = new Map<number, number>();
    for (let s = 0; s < 6; s++) {
      for (let k = 0; k < 4; k++) {
        const r = s * 4 + k;
        expect(t.inputLength[r]).toBe(100 + k * 130);
        expect(t.delayAfterPreviousMs[r]).toBe(k === 0 ? 0 : 250);
        const h = hashes(t, r);
        expect(h.length).toBe(Math.floor(t.inputLength[r] / E));
        if (k > 0) expect(h.subarray(0, hashes(t, r - 1).length)).toEqual(hashes(t, r - 1));
        for (const x of h) {
          expect(owner.get(x) ?? s).toBe(s);
          owner.set(x, s);
        }
      }
    }
  });

  it("prefix groups: sessions of a group share exactly round(⌈L0/E⌉·ratio) blocks (capped at ⌊L0/E⌋), others nothing", () => {
    const o = opts({
      sessions: 30,
      sharedPrefixRatio: 0.5,
      prefixGroups: 3,
      newInput: { distribution: "fixed", value: 200 },
    });
    const t = makeSessionTable(o);
    const group = sessionGroups(o);
    expect(new Set(group).size).toBe(3);
    const shared = Math.min(Math.floor(200 / E), Math.round(Math.ceil(200 / E) * 0.5)); // 7
    for (let a = 0; a < 30; a++) {
      for (let b = a + 1; b < 30; b++) {
        const ha = hashes(t, a * 4 + 3);
        const hb = new Set(hashes(t, b * 4 + 3));
        const common = ha.filter((x) => hb.has(x)).length;
        expect(common).toBe(group[a] === group[b] ? shared : 0);
      }
    }
    // Ratio 1: the whole first prompt's full blocks, never its partial block.
    const full = makeSessionTable({ ...o, sharedPrefixRatio: 1 });
    const g = sessionGroups({ ...o, sharedPrefixRatio: 1 });
    const b = g.indexOf(g[0], 1);
    const h0 = hashes(full, 3);
    const h1 = new Set(hashes(full, b * 4 + 3));
    expect(h0.filter((x) => h1.has(x)).length).toBe(Math.floor(200 / E));
  });

  it("sampled lengths: each turn draws its new input and output; deterministic per seed", () => {
    const o = opts({
      newInput: { distribution: "uniform", min: 10, max: 50 },
      output: { distribution: "exponential", mean: 20, min: 1, max: 200 },
    });
    const t = makeSessionTable(o);
    for (let s = 0; s < 6; s++) {
      for (let k = 1; k < 4; k++) {
        const r = s * 4 + k;
        const added = t.inputLength[r] - t.inputLength[r - 1] - t.outputLength[r - 1];
        expect(added).toBeGreaterThanOrEqual(10);
        expect(added).toBeLessThanOrEqual(50);
      }
    }
    expect(makeSessionTable(o).inputLength).toEqual(t.inputLength);
    expect(makeSessionTable({ ...o, seed: 43 }).inputLength).not.toEqual(t.inputLength);
  });
});

const engine = (replicas: number) => ({
  model: "Qwen/Qwen3-8B",
  hardware: "h200_sxm",
  workers: {
    aggregated: {
      parallelism: { replicas },
      kv_cache: { capacity: { type: "fixed", blocks: 50_000 }, block_size: E },
      timing: { type: "polynomial" },
    },
  },
});

async function run(traffic: Record<string, unknown>, replicas = 2): Promise<PerRequestRecord[]> {
  const report = await predict(
    { engine: engine(replicas), router: { policy: "kv_router" }, traffic },
    { capturePerRequest: true },
  );
  return [...report.perRequest!];
}

function bySession(records: PerRequestRecord[]): Map<string, PerRequestRecord[]> {
  const out = new Map<string, PerRequestRecord[]>();
  for (const r of records) out.set(r.session_id, [...(out.get(r.session_id) ?? []), r]);
  for (const turns of out.values()) turns.sort((a, b) => a.turn_index - b.turn_index);
  return out;
}

/** Turn k+1 arrives `delay` after turn k finished, and the prompt grows by output + new input. */
function expectChained(
  sessions: Map<string, PerRequestRecord[]>,
  turns: number,
  delay: number,
  newInput: number,
) {
  for (const rows of sessions.values()) {
    expect(rows.map((r) => r.turn_index)).toEqual(Array.from({ length: turns }, (_, k) => k));
    for (let k = 1; k < turns; k++) {
      const prev = rows[k - 1];
      const cur = rows[k];
      expect(prev.terminal_status).toBe("completed");
      expect(cur.arrival_time_ms).toBeCloseTo(prev.terminal_time_ms + delay, 6);
      // One request in flight per session: the next turn arrives only after the previous ended.
      expect(cur.arrival_time_ms).toBeGreaterThanOrEqual(prev.terminal_time_ms);
      expect(cur.input_length).toBe(prev.input_length + prev.output_length + newInput);
    }
  }
}

describe("session traffic in a replay", () => {
  it("reference case: concurrency 1, 2 sessions × 3 turns, 8 new / 2 out, 5 ms think time", async () => {
    const records = await run({
      source: {
        type: "synthetic-session",
        new_input_tokens_per_turn: 8,
        output_tokens_per_turn: 2,
        session: { turns: 3, inter_turn_delay_ms: 5 },
      },
      load: { type: "concurrency", concurrency: 1 },
      stop: { sessions: 2 },
    });
    expect(records).toHaveLength(6);
    const ordered = [...records].sort((a, b) => a.arrival_time_ms - b.arrival_time_ms);
    expect(ordered.map((r) => [r.session_id, r.turn_index])).toEqual([
      ["session_0", 0],
      ["session_0", 1],
      ["session_0", 2],
      ["session_1", 0],
      ["session_1", 1],
      ["session_1", 2],
    ]);
    expect(ordered.slice(0, 3).map((r) => r.input_length)).toEqual([8, 18, 28]);
    expectChained(bySession(records), 3, 5, 8);
    // A session holds its slot through its turns: session 1 starts when session 0's last turn ends.
    expect(ordered[3].arrival_time_ms).toBe(ordered[2].terminal_time_ms);
  });

  it("closed loop counts active sessions: never more than `concurrency` sessions between first arrival and last end", async () => {
    const records = await run({
      source: {
        type: "synthetic-session",
        new_input_tokens_per_turn: 300,
        output_tokens_per_turn: 40,
        session: { turns: 4, inter_turn_delay_ms: 100 },
      },
      load: { type: "concurrency", concurrency: 3 },
      stop: { sessions: 12 },
    });
    expect(records).toHaveLength(48);
    const sessions = bySession(records);
    expectChained(sessions, 4, 100, 300);
    const spans = [...sessions.values()].map((rows) => [rows[0].arrival_time_ms, rows[3].terminal_time_ms]);
    for (const [start] of spans) {
      const active = spans.filter(([a, b]) => a <= start && start < b).length;
      expect(active).toBeLessThanOrEqual(3);
    }
    expect(spans.filter(([a]) => a === 0)).toHaveLength(3);
  });

  it("Poisson sessions: first turns at seeded exponential gaps (first at 0); later turns chain; prefix caching hits each session's history", async () => {
    const records = await run(
      {
        source: {
          type: "synthetic-session",
          new_input_tokens_per_turn: 200,
          output_tokens_per_turn: 24,
          session: { turns: 3, inter_turn_delay_ms: 1000, shared_prefix_ratio: 0.5, prefix_groups: 2 },
        },
        load: { type: "poisson", sessions_per_second: 2, seed: 5 },
        stop: { sessions: 20 },
      },
      1,
    );
    expect(records).toHaveLength(60);
    const sessions = bySession(records);
    expectChained(sessions, 3, 1000, 200);
    const firsts = [...sessions.values()].map((rows) => rows[0].arrival_time_ms).sort((a, b) => a - b);
    expect(firsts[0]).toBe(0);
    expect(firsts).toEqual(Array.from(arrivalTimes(20, { type: "poisson", requestsPerSecond: 2, seed: 5 })));
    for (const rows of sessions.values()) {
      // A later turn re-reads exactly its previous prompt's full blocks from the cache (the
      // previous output's tokens are recomputed: generated-token blocks hash per request).
      for (let k = 1; k < 3; k++) {
        expect(rows[k].reused_input_tokens).toBe(Math.floor(rows[k - 1].input_length / E) * E);
      }
    }
  });

  it("same YAML ⇒ identical per-request results", async () => {
    const traffic = {
      source: {
        type: "synthetic-session",
        new_input_tokens_per_turn: { distribution: "lognormal", mean: 300, stddev: 150 },
        output_tokens_per_turn: { distribution: "uniform", min: 10, max: 80 },
        session: { turns: 3, inter_turn_delay_ms: 50, shared_prefix_ratio: 0.3, prefix_groups: 4 },
        seed: 3,
      },
      load: { type: "constant_rate", sessions_per_second: 5 },
      stop: { sessions: 15 },
    };
    expect(JSON.stringify(await run(traffic))).toBe(JSON.stringify(await run(traffic)));
  });
});

describe("session config (reference names, defaults and rules)", () => {
  const yaml = (source: string, load = "{type: concurrency, concurrency: 2}", stop = "{sessions: 3}") =>
    `${RUNNABLE_ENGINE}traffic:\n  source: ${source}\n  load: ${load}\n  stop: ${stop}\n`;

  it("defaults: 1024 new / 128 out per turn, 4 turns, no sharing, no delay; sessions × turns requests", () => {
    const spec = loadYaml(yaml("{type: synthetic-session, session: {}}"));
    expect(spec.source).toEqual({
      type: "synthetic-session",
      newInputTokensPerTurn: 1024,
      outputTokensPerTurn: 128,
      newInput: { distribution: "fixed", value: 1024 },
      output: { distribution: "fixed", value: 128 },
      turns: 4,
      sharedPrefixRatio: 0,
      prefixGroups: 0,
      interTurnDelayMs: 0,
      seed: 42,
    });
    expect(spec.stop).toEqual({ requests: 12, sessions: 3, maxVirtualTimeMs: null });
  });

  it("sessions_per_load_unit: max(1, round(x · load unit)) with the session rate or concurrency", () => {
    const a = loadYaml(
      yaml(
        "{type: synthetic-session, session: {}}",
        "{type: poisson, sessions_per_second: 2.5}",
        "{sessions_per_load_unit: 3}",
      ),
    );
    expect(a.stop.sessions).toBe(8); // round half to even of 7.5
    expect(a.load).toEqual({ type: "poisson", requestsPerSecond: 2.5, seed: 42 });
    const b = loadYaml(
      yaml(
        "{type: synthetic-session, session: {turns: 2}}",
        "{type: concurrency, concurrency: 4}",
        "{sessions_per_load_unit: 0.1}",
      ),
    );
    expect(b.stop).toEqual({ requests: 2, sessions: 1, maxVirtualTimeMs: null });
  });

  const bad = (y: string, path: string, message: string) => () => {
    const err = loadError(y);
    expect(issueAt(err, path).message).toBe(message);
    expect(err.format()).toMatch(/line \d+, column \d+/);
  };
  it(
    "turns ≥ 2",
    bad(
      yaml("{type: synthetic-session, session: {turns: 1}}"),
      "traffic.source.session.turns",
      "Input should be greater than or equal to 2",
    ),
  );
  it(
    "shared_prefix_ratio in [0, 1]",
    bad(
      yaml("{type: synthetic-session, session: {shared_prefix_ratio: 1.5, prefix_groups: 2}}"),
      "traffic.source.session.shared_prefix_ratio",
      "Input should be less than or equal to 1",
    ),
  );
  it(
    "a positive ratio needs prefix groups",
    bad(
      yaml("{type: synthetic-session, session: {shared_prefix_ratio: 0.5}}"),
      "traffic.source.session.prefix_groups",
      "traffic.source.session.prefix_groups must be positive when shared_prefix_ratio is positive",
    ),
  );
  it(
    "inter_turn_delay_ms ≥ 0",
    bad(
      yaml("{type: synthetic-session, session: {inter_turn_delay_ms: -1}}"),
      "traffic.source.session.inter_turn_delay_ms",
      "Input should be greater than or equal to 0",
    ),
  );
  it(
    "unknown session key",
    bad(
      yaml("{type: synthetic-session, session: {turn: 3}}"),
      "traffic.source.session.turn",
      "Extra inputs are not permitted",
    ),
  );
  it(
    "request fields on a session source",
    bad(
      yaml("{type: synthetic-session, session: {}, input_tokens: 5}"),
      "traffic.source",
      "traffic.source.type='synthetic-session' does not accept ['input_tokens']",
    ),
  );
  it(
    "a request rate on a session source",
    bad(
      yaml("{type: synthetic-session, session: {}}", "{type: poisson, requests_per_second: 2}"),
      "traffic.load.requests_per_second",
      "traffic.load.requests_per_second is not accepted with traffic.source.type='synthetic-session'; use sessions_per_second",
    ),
  );
  it(
    "a session rate is required",
    bad(
      yaml("{type: synthetic-session, session: {}}", "{type: constant_rate}"),
      "traffic.load",
      "traffic.load.type='constant_rate' requires sessions_per_second",
    ),
  );
  it(
    "a request stop on a session source",
    bad(
      yaml("{type: synthetic-session, session: {}}", "{type: concurrency}", "{requests: 5}"),
      "traffic.stop.requests",
      "traffic.stop.requests is for request traffic; traffic.source.type='synthetic-session' stops at sessions or sessions_per_load_unit",
    ),
  );
  it(
    "a session stop on a request source",
    bad(
      yaml("{type: synthetic}", "{type: concurrency}", "{sessions: 5}"),
      "traffic.stop.sessions",
      "traffic.stop.sessions is for traffic.source.type='synthetic-session'; use requests or requests_per_load_unit",
    ),
  );
  it(
    "two session stops",
    bad(
      yaml(
        "{type: synthetic-session, session: {}}",
        "{type: concurrency}",
        "{sessions: 5, sessions_per_load_unit: 2}",
      ),
      "traffic.stop",
      "synthetic session traffic requires exactly one stop condition, got ['sessions', 'sessions_per_load_unit']",
    ),
  );
  it(
    "no stop",
    bad(
      `${RUNNABLE_ENGINE}traffic:\n  source: {type: synthetic-session, session: {}}\n`,
      "traffic.stop",
      "synthetic session traffic requires a stop condition",
    ),
  );
  it(
    "stages are not for sessions",
    bad(
      yaml(
        "{type: synthetic-session, session: {}}",
        "{type: poisson, stages: [{requests_per_second: 1, duration_seconds: 2}]}",
      ),
      "traffic.load.stages",
      "traffic.load.stages are not supported with traffic.source.type='synthetic-session' (fleetsim)",
    ),
  );
});
