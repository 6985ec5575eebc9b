/**
 * `format: weka` (docs/traces.md "Weka"): an AgentX / Weka corpus lowered to a dependency graph —
 * conversation chains, forks, subagents spawned and joined back, think times, file-local hashes.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RequestTable } from "../../src/traffic/requests.js";
import { TraceError } from "../../src/traffic/traceError.js";
import { loadWekaTrace } from "../../src/traffic/weka.js";
import { cli, cliPredict, setFlags } from "../helpers/cli.js";
import { configFile, engineYaml, fixedTiming } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

const req = (t: number, input: number, output: number, hashIds: number[], apiTime?: number) => ({
  t,
  type: "s",
  model: "m",
  in: input,
  out: output,
  hash_ids: hashIds,
  ...(apiTime === undefined ? {} : { api_time: apiTime }),
});

function writePlay(
  dir: string,
  name: string,
  requests: unknown[],
  over: Record<string, unknown> = {},
): string {
  const file = join(dir, name);
  writeFileSync(
    file,
    JSON.stringify({ id: name, models: ["m"], block_size: 4, hash_id_scope: "local", requests, ...over }),
  );
  return file;
}

const load = (path: string, traceBlockSize: number | null = null, engineBlockSize = 4) =>
  loadWekaTrace(path, { traceBlockSize, engineBlockSize, nestedTimestampBasis: "auto" });

/** Row facts by request id suffix: arrival (ms, NaN when it waits), what it waits for, its delay. */
function graph(t: RequestTable) {
  const ids = t.requestIds as string[];
  const deps = t.dependencies!;
  const short = (id: string) => id.slice(id.lastIndexOf(":outer:") + 1);
  return Object.fromEntries(
    ids.map((id, i) => [
      short(id),
      {
        at: t.timestampMs[i],
        waits: Array.from(deps.waitRows.subarray(deps.waitOffsets[i], deps.waitOffsets[i + 1])).map((r) =>
          short(ids[r]),
        ),
        delay: t.delayAfterPreviousMs[i],
        output: t.outputLength[i],
      },
    ]),
  );
}

describe("Weka lowering", () => {
  it("spawns a subagent from the parent's request before it and joins it back; a fork starts at its fork point", async () => {
    const dir = tempDir();
    const path = writePlay(dir, "play.json", [
      req(0, 8, 1, [1, 2], 1.0),
      {
        t: 0.2,
        type: "subagent",
        agent_id: "a",
        subagent_type: "Explore",
        duration_ms: 400,
        status: "completed",
        requests: [req(0.3, 6, 1, [3, 4], 0.2)],
      },
      // Shares the root's prefix but starts before it ended: a forked chain.
      req(0.8, 9, 1, [1, 2, 5]),
      {
        t: 1.1,
        type: "subagent",
        agent_id: "bg",
        subagent_type: "Explore",
        status: "async_launched",
        requests: [req(1.2, 4, 0, [9], 0.1)],
      },
    ]);
    const g = graph(await load(path));
    expect(Object.keys(g).sort()).toEqual(["outer:0", "outer:1:inner:0", "outer:2", "outer:3:inner:0"]);
    expect(g["outer:0"]).toMatchObject({ at: 0, waits: [] });
    // Started while its spawn point ran: at that request's dispatch plus 0.3 s.
    expect(g["outer:1:inner:0"]).toMatchObject({ at: 300, waits: [] });
    // The first top-level request after the subagent's end (0.6 s) waits for its last request.
    expect(g["outer:2"].waits).toEqual(["outer:1:inner:0"]);
    // The background subagent starts 0.2 s after its spawn point (ended at 1.0 s) completed; its
    // zero-token output is replayed as 1 token, and nothing joins it.
    expect(g["outer:3:inner:0"]).toMatchObject({ waits: ["outer:0"], output: 1 });
    expect(g["outer:3:inner:0"].delay).toBeCloseTo(200, 9);
    expect(Number.isNaN(g["outer:3:inner:0"].at)).toBe(true);
  });

  it("a turn that extends the conversation after the previous one ended waits for it, plus the think time", async () => {
    const dir = tempDir();
    const path = writePlay(dir, "p.json", [
      req(0, 8, 4, [1, 2], 2.0),
      req(5, 12, 4, [1, 2, 3], 1.0),
      req(9, 16, 4, [1, 2, 3, 4]),
    ]);
    const g = graph(await load(path));
    expect(g["outer:1"]).toMatchObject({ waits: ["outer:0"] });
    expect(g["outer:1"].delay).toBeCloseTo(3000, 9);
    expect(g["outer:2"]).toMatchObject({ waits: ["outer:1"] });
    expect(g["outer:2"].delay).toBeCloseTo(3000, 9);
  });

  it("hash ids are local to their play, and a partial last block is private to its request", async () => {
    const dir = tempDir();
    writePlay(dir, "a.json", [req(0, 6, 1, [7, 8])]);
    mkdirSync(join(dir, "more"));
    writePlay(join(dir, "more"), "b.json", [req(0, 6, 1, [7, 8]), req(10, 8, 1, [7, 8])]);
    // Engine blocks of 2 tokens: the partial trace block (tokens 4-5) is a full engine block.
    const t = await load(dir, null, 2);
    expect(t.count).toBe(3);
    const blocks = (i: number) =>
      Array.from(t.blockHashes.subarray(t.blockOffsets[i], t.blockOffsets[i + 1]));
    // a.json's block 7 and b.json's block 7 are different blocks; within b.json they are shared.
    expect(blocks(0)[0]).not.toBe(blocks(1)[0]);
    expect(blocks(1)[0]).toBe(blocks(2)[0]);
    // 6 tokens: trace block 7 (two engine blocks) and a private partial block; the 8-token
    // request's third engine block comes from its trace block 8 instead.
    expect(blocks(1)).toHaveLength(3);
    expect(blocks(2)).toHaveLength(4);
    expect(blocks(1).slice(0, 2)).toEqual(blocks(2).slice(0, 2));
    expect(blocks(1)[2]).not.toBe(blocks(2)[2]);
    // Every play starts at 0.
    expect([t.timestampMs[0], t.timestampMs[1]]).toEqual([0, 0]);
  });

  it("names the file and field of a bad play", async () => {
    const dir = tempDir();
    const bad = writePlay(dir, "bad.json", [req(0, 8, 1, [1, 2])], { hash_id_scope: "global" });
    await expect(load(bad)).rejects.toThrow(`${bad}: field 'hash_id_scope': expected "local", got "global"`);
    const orphan = writePlay(dir, "orphan.json", [
      {
        t: 0,
        type: "subagent",
        agent_id: "x",
        subagent_type: "E",
        status: "completed",
        requests: [req(0, 4, 1, [1])],
      },
      req(1, 4, 1, [2]),
    ]);
    await expect(load(orphan)).rejects.toThrow("subagent 'x' comes before any top-level request");
    const ok = writePlay(dir, "ok.json", [req(0, 8, 1, [1, 2])]);
    await expect(load(ok, 16)).rejects.toThrow(TraceError);
    await expect(load(ok, 16)).rejects.toThrow(
      "traffic.source.block_size is 16 but the corpus's hash blocks are 4 tokens",
    );
    const other = tempDir();
    writePlay(other, "a.json", [req(0, 8, 1, [1, 2])]);
    writePlay(other, "b.json", [req(0, 8, 1, [1, 2])], { block_size: 8 });
    await expect(load(other)).rejects.toThrow("block_size 8 differs from");
  });
});

describe("fleetsim predict with a Weka corpus", () => {
  it("replays every play's requests through the graph, aggregated, and says so in the run block", async () => {
    const dir = tempDir();
    const corpus = join(dir, "corpus");
    mkdirSync(corpus);
    for (let p = 0; p < 3; p++) {
      writePlay(corpus, `play${p}.json`, [
        req(0, 256, 16, [1, 2, 3, 4], 0.5),
        {
          t: 0.1,
          type: "subagent",
          agent_id: "s",
          subagent_type: "Explore",
          duration_ms: 300,
          status: "completed",
          requests: [req(0.2, 128, 8, [9, 10], 0.1)],
        },
        req(2, 300, 16, [1, 2, 3, 4, 5], 0.5),
      ]);
    }
    const { config } = configFile(
      `traffic:
  source: {type: trace, format: weka, paths: [corpus]}
  load: {type: trace_timestamps}
${engineYaml({
  model: "Qwen/Qwen3-8B",
  contextLength: null,
  kvCache: "{block_size: 4, capacity: {type: fixed, blocks: 4000}}",
  timing: fixedTiming(20, 5),
})}`,
      { dir, name: "weka.yaml" },
    );
    const out = join(dir, "out");
    const r = await cliPredict(config, out, "--format", "json");
    expect(r.err).not.toContain("error");
    expect(r.code).toBe(0);
    const s = JSON.parse(r.out);
    expect(s.completed_requests).toBe(9);
    const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
    expect(doc.run.traffic.source).toBe("weka");
  });

  it("refuses nested_timestamp_basis on another format", async () => {
    const r = await cli(
      "validate",
      "-c",
      "examples/aggregated.yaml",
      ...setFlags("traffic.source.nested_timestamp_basis=relative"),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("traffic.source.nested_timestamp_basis is only valid with format 'weka'");
  });
});
