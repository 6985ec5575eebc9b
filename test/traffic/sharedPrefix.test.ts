/**
 * Shared-prefix prompt groups (`traffic.source.type: synthetic-shared-prefix`, docs/traffic.md
 * §Shared-prefix groups): prompts of one group share exactly the system prompt's full blocks and
 * nothing else; the prompt order is a seeded permutation; prefix caching and the KV router see the
 * sharing in a replay; bad configs are errors at their own path.
 */
import { describe, expect, it } from "vitest";
import { predict } from "../../src/api/replay.js";
import { promptBlockHashes } from "../../src/traffic/blockHashes.js";
import { makeSharedPrefixTable, sharedPrefixGroupOf } from "../../src/traffic/sharedPrefix.js";
import { GROUP_VALUE_BASE, SEQUENCE_HASH_SEED, writeChain } from "../../src/traffic/synthetic/hashes.js";
import { expectIssue, loadYaml, RUNNABLE_ENGINE } from "../helpers/configHelpers.js";

const E = 16;

function hashesOf(t: ReturnType<typeof makeSharedPrefixTable>, row: number): Float64Array {
  return t.blockHashes.subarray(t.blockOffsets[row], t.blockOffsets[row + 1]);
}

function commonPrefix(a: Float64Array, b: Float64Array): number {
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  return k;
}

describe("generated block hashes", () => {
  it("equal the trace expansion's for the same block values (trace block = engine block)", () => {
    const values = [GROUP_VALUE_BASE + 3, GROUP_VALUE_BASE + 3, 7, 8, 9];
    const out = new Float64Array(5);
    const h = writeChain(out, 0, 2, SEQUENCE_HASH_SEED, GROUP_VALUE_BASE + 3, 0, E);
    writeChain(out, 2, 3, h, 7, 1, E);
    expect(out).toEqual(promptBlockHashes(values, E, E).sequence);
  });
});

describe("makeSharedPrefixTable", () => {
  const base = {
    groups: 5,
    promptsPerGroup: 8,
    systemPromptTokens: 1000, // 62 full blocks of 16, then a block shared with the question
    question: { distribution: "uniform", min: 20, max: 300 } as const,
    output: { distribution: "fixed", value: 32 } as const,
    requests: 40,
    engineBlockSize: E,
    seed: 9,
    timestampMs: new Float64Array(40).fill(Number.NaN),
  };
  const systemBlocks = Math.floor(1000 / E);

  it("same group ⇒ exactly the system prompt's full blocks in common; other groups ⇒ nothing at all", () => {
    const t = makeSharedPrefixTable(base);
    const group = sharedPrefixGroupOf(base, t.count);
    expect(new Set(group).size).toBe(5);
    for (let i = 0; i < t.count; i++) {
      expect(t.inputLength[i]).toBeGreaterThanOrEqual(1020);
      expect(t.inputLength[i]).toBeLessThanOrEqual(1300);
      expect(t.outputLength[i]).toBe(32);
      expect(hashesOf(t, i).length).toBe(Math.floor(t.inputLength[i] / E));
    }
    for (let i = 0; i < t.count; i++) {
      const hi = hashesOf(t, i);
      for (let j = i + 1; j < t.count; j++) {
        const hj = hashesOf(t, j);
        const shared = new Set(hi);
        const common = hj.filter((h) => shared.has(h)).length;
        if (group[i] === group[j]) {
          expect(commonPrefix(hi, hj)).toBe(systemBlocks);
          expect(common).toBe(systemBlocks);
        } else {
          expect(common).toBe(0);
        }
      }
    }
  });

  it("each group's prompt count is prompts_per_group; a cycle repeats a prompt's blocks exactly", () => {
    const t = makeSharedPrefixTable({ ...base, requests: 100, timestampMs: new Float64Array(100) });
    const group = sharedPrefixGroupOf(base, 100);
    const perGroup = new Array<number>(5).fill(0);
    for (let i = 0; i < 40; i++) perGroup[group[i]]++;
    expect(perGroup).toEqual([8, 8, 8, 8, 8]);
    for (let i = 40; i < 100; i++) {
      expect(t.inputLength[i]).toBe(t.inputLength[i - 40]);
      expect(hashesOf(t, i)).toEqual(hashesOf(t, i - 40));
    }
    // The first 40 requests are 40 distinct prompts.
    expect(new Set(Array.from({ length: 40 }, (_, i) => hashesOf(t, i).at(-1))).size).toBe(40);
  });

  it("a system prompt that is a whole number of blocks shares all of them; a question of 0 tokens is allowed", () => {
    const t = makeSharedPrefixTable({
      ...base,
      systemPromptTokens: 640,
      question: { distribution: "fixed", value: 0 },
      requests: 16,
      timestampMs: new Float64Array(16),
    });
    const group = sharedPrefixGroupOf(base, 16);
    for (let i = 1; i < 16; i++) {
      const j = group.indexOf(group[i]);
      if (j < i) expect(hashesOf(t, i)).toEqual(hashesOf(t, j));
    }
    expect(t.inputLength.every((l) => l === 640)).toBe(true);
  });

  it("the order is a seeded permutation: deterministic, different across seeds", () => {
    expect(sharedPrefixGroupOf(base, 40)).toEqual(sharedPrefixGroupOf(base, 40));
    expect(sharedPrefixGroupOf(base, 40)).not.toEqual(sharedPrefixGroupOf({ ...base, seed: 10 }, 40));
    expect(makeSharedPrefixTable(base).blockHashes).toEqual(makeSharedPrefixTable(base).blockHashes);
  });
});

const engine = (replicas: number) => ({
  model: "Qwen/Qwen3-8B",
  hardware: "h200_sxm",
  workers: {
    aggregated: {
      parallelism: { replicas },
      kv_cache: { capacity: { type: "fixed", blocks: 20_000 }, block_size: E },
      timing: { type: "polynomial" },
    },
  },
});
const traffic = {
  source: {
    type: "synthetic-shared-prefix",
    groups: 4,
    prompts_per_group: 10,
    system_prompt_tokens: 2000,
    question_tokens: 100,
    output_tokens: 16,
  },
  load: { type: "constant_rate", requests_per_second: 2 },
  stop: { requests: 40 },
};

describe("shared-prefix traffic in a replay", () => {
  it("prefix caching reuses exactly the system prompt's blocks for every prompt after its group's first", async () => {
    const report = await predict({ engine: engine(1), traffic }, { capturePerRequest: true });
    const group = sharedPrefixGroupOf({ groups: 4, promptsPerGroup: 10, seed: 42 }, 40);
    const seen = new Set<number>();
    const reused = new Map(report.perRequest!.map((r) => [r.request_id, r.reused_input_tokens]));
    for (let i = 0; i < 40; i++) {
      expect(reused.get(`synthetic-${i}`)).toBe(seen.has(group[i]) ? Math.floor(2000 / E) * E : 0);
      seen.add(group[i]);
    }
    expect(report.summary.completed_requests).toBe(40);
  });

  it("the KV router sees the sharing: it reuses more than round robin across 4 workers", async () => {
    const reuse = async (policy: string) => {
      const r = await predict(
        { engine: engine(4), router: { policy }, traffic },
        { capturePerRequest: true },
      );
      return r.perRequest!.reduce((s, x) => s + x.reused_input_tokens, 0);
    };
    const kv = await reuse("kv_router");
    const rr = await reuse("round_robin");
    expect(kv).toBe((40 - 4) * Math.floor(2000 / E) * E);
    expect(kv).toBeGreaterThan(rr);
  });

  it("resolves to a synthetic spec with the groups", () => {
    const spec = loadYaml(`${RUNNABLE_ENGINE}traffic:
  source: {type: synthetic-shared-prefix, groups: 2, prompts_per_group: 3, system_prompt_tokens: 500}
  stop: {requests: 6}
`);
    expect(spec.source).toEqual({
      type: "synthetic",
      inputTokens: 628,
      outputTokens: 128,
      input: { distribution: "fixed", value: 128 },
      output: { distribution: "fixed", value: 128 },
      seed: 42,
      sharedPrefix: { groups: 2, promptsPerGroup: 3, systemPromptTokens: 500 },
    });
  });

  const bad = (source: string, path: string, message: string) => () =>
    expectIssue(`${RUNNABLE_ENGINE}traffic:\n  source: ${source}\n  stop: {requests: 4}\n`, path, message);
  it(
    "requires the group shape",
    bad(
      "{type: synthetic-shared-prefix, groups: 2}",
      "traffic.source",
      "traffic.source.type='synthetic-shared-prefix' requires prompts_per_group, system_prompt_tokens",
    ),
  );
  it(
    "rejects input_tokens (the prompt is system prompt + question)",
    bad(
      "{type: synthetic-shared-prefix, groups: 2, prompts_per_group: 2, system_prompt_tokens: 9, input_tokens: 5}",
      "traffic.source",
      "traffic.source.type='synthetic-shared-prefix' does not accept ['input_tokens']",
    ),
  );
  it(
    "rejects zero groups",
    bad(
      "{type: synthetic-shared-prefix, groups: 0, prompts_per_group: 2, system_prompt_tokens: 9}",
      "traffic.source.groups",
      "Input should be greater than or equal to 1",
    ),
  );
  it(
    "bounds the prompt count",
    bad(
      "{type: synthetic-shared-prefix, groups: 100000, prompts_per_group: 1000, system_prompt_tokens: 9}",
      "traffic.source.groups",
      "traffic.source.groups × prompts_per_group = 100000000 prompts, more than 10000000",
    ),
  );
  it(
    "rejects a negative question length",
    bad(
      "{type: synthetic-shared-prefix, groups: 1, prompts_per_group: 2, system_prompt_tokens: 9, question_tokens: -1}",
      "traffic.source.question_tokens",
      "Input should be greater than or equal to 0",
    ),
  );
  it(
    "rejects group fields on a plain synthetic source",
    bad(
      "{type: synthetic, groups: 3}",
      "traffic.source",
      "traffic.source.type='synthetic' does not accept ['groups']",
    ),
  );
});
