/**
 * The replay task: a job run in a sweep worker gives the in-process summary of the same spec (all
 * keys but the host-time ones), and a subset of rows replays as `selectRows` describes.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import type { RunSpec } from "../../src/config/runSpec.js";
import { HOST_TIME_KEYS, type Summary } from "../../src/metrics/summary.js";
import { loadWorkload, runPrediction } from "../../src/pipeline/index.js";
import { type ReplayJob, type ReplayJobOutput, replayJob } from "../../src/pipeline/replayTask.js";
import { sweep } from "../../src/pipeline/sweepTasks.js";
import { requestIdAt } from "../../src/traffic/requests.js";
import { selectRows } from "../../src/traffic/tableRows.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/aggregated.yaml", import.meta.url));

function spec(...sets: string[]): RunSpec {
  return loadConfig({ configPath: EXAMPLE, sets, stack: "dynamo" });
}

function stable(summary: Summary): Record<string, unknown> {
  const s: Record<string, unknown> = { ...summary };
  for (const key of HOST_TIME_KEYS) delete s[key];
  return s;
}

function ok(r: { status: string; value?: ReplayJobOutput }): ReplayJobOutput {
  if (r.status !== "ok" || r.value === undefined) throw new Error(`expected ok, got ${JSON.stringify(r)}`);
  return r.value;
}

const LOAD_PLANNER =
  "planner={policy: enabled, target: load, enable_throughput_scaling: false, enable_load_scaling: true, " +
  "load_adjustment_interval_seconds: 5, max_num_gpus: 4, min_workers: 1}";

describe("replay task", () => {
  it("a RunSpec is plain data that survives structured clone", () => {
    for (const s of [spec(), spec(LOAD_PLANNER)]) expect(structuredClone(s)).toStrictEqual(s);
  });

  it("gives the in-process summary of the bundled example, fixed and autoscaled", async () => {
    const specs = [
      spec("planner={policy: disabled}"),
      spec(LOAD_PLANNER),
      spec("router={policy: kv_router}"),
    ];
    const jobs: ReplayJob[] = specs.map((s) => ({ spec: s, capturePerRequest: false }));
    const out = await sweep<ReplayJob, ReplayJobOutput>(jobs, {
      maxParallel: 2,
      timeoutMs: 60_000,
      task: "replay",
    });
    expect(out.processesStarted).toBe(2);
    for (let i = 0; i < specs.length; i++) {
      const ref = await runPrediction(specs[i], { capturePerRequest: false });
      expect(stable(ok(out.results[i]).summary)).toStrictEqual(stable(ref.prediction.summary));
    }
  });

  it("replays a subset of rows in a worker as it does in-process; all rows = no rows", async () => {
    const s = spec();
    const table = await loadWorkload(s);
    const all = Array.from({ length: table.count }, (_, r) => r);
    // Whole sessions with an even index: every kept session keeps its first (timestamped) turn.
    const even = all.filter((r) => table.session[r] % 2 === 0);
    const jobs: ReplayJob[] = [
      { spec: s, rows: even, capturePerRequest: false },
      { spec: s, rows: all, capturePerRequest: false },
      { spec: s, rows: [3, 1], capturePerRequest: false },
    ];
    const out = await sweep<ReplayJob, ReplayJobOutput>(jobs, {
      maxParallel: 2,
      timeoutMs: 60_000,
      task: "replay",
    });
    const inProcess = await replayJob(jobs[0]);
    expect(stable(ok(out.results[0]).summary)).toStrictEqual(stable(inProcess.summary));
    expect(ok(out.results[0]).summary.completed_requests).toBe(even.length);
    const whole = await runPrediction(s, { capturePerRequest: false });
    expect(stable(ok(out.results[1]).summary)).toStrictEqual(stable(whole.prediction.summary));
    expect(out.results[2]).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/strictly increasing/),
    });
  });

  it("replays the sweep's shared request table (rows select from it) as it replays its own workload", async () => {
    const s = spec();
    const table = await loadWorkload(s);
    const even = Array.from({ length: table.count }, (_, r) => r).filter((r) => table.session[r] % 2 === 0);
    const window = selectRows(table, even, true);
    const firstHalf = Array.from({ length: Math.floor(window.count / 2) }, (_, r) => r);
    const other = spec("engine.workers.aggregated.kv_cache.block_size=32");
    const jobs: ReplayJob[] = [
      { spec: s, capturePerRequest: false },
      { spec: s, rows: firstHalf, capturePerRequest: false },
      { spec: other, capturePerRequest: false },
    ];
    const out = await sweep<ReplayJob, ReplayJobOutput>(jobs, {
      maxParallel: 1,
      timeoutMs: 60_000,
      task: "replay",
      shared: { table: window },
    });
    const own = await replayJob({ spec: s, rows: even, capturePerRequest: false });
    expect(stable(ok(out.results[0]).summary)).toStrictEqual(stable(own.summary));
    const half = await replayJob({ spec: s, rows: firstHalf, capturePerRequest: false }, { table: window });
    expect(stable(ok(out.results[1]).summary)).toStrictEqual(stable(half.summary));
    expect(ok(out.results[1]).summary.completed_requests).toBe(firstHalf.length);
    expect(out.results[2]).toMatchObject({
      status: "failed",
      error: expect.stringMatching(/hashed for 64-token blocks, the spec's engine uses 32/),
    });
  });

  it("refuses a spec that still carries planner.retune", async () => {
    const s = spec();
    const withRetune = { ...s, planner: { ...(s.planner ?? {}), retune: {} } } as unknown as RunSpec;
    await expect(replayJob({ spec: withRetune, capturePerRequest: false })).rejects.toThrow(/planner.retune/);
  });
});

describe("selectRows", () => {
  it("keeps prompts, renumbers sessions and chains kept turns, starting at 0", async () => {
    const table = await loadWorkload(spec());
    const all = Array.from({ length: table.count }, (_, r) => r);
    const odd = all.filter((r) => table.session[r] % 2 === 1);
    const sub = selectRows(table, odd, true);
    expect(sub.count).toBe(odd.length);
    expect(sub.sessionCount).toBe(new Set(odd.map((r) => table.session[r])).size);
    let minStart = Number.POSITIVE_INFINITY;
    for (let i = 0; i < sub.count; i++) {
      const r = odd[i];
      expect(sub.inputLength[i]).toBe(table.inputLength[r]);
      expect(requestIdAt(sub.requestIds, i)).toBe(requestIdAt(table.requestIds, r));
      expect(Array.from(sub.blockHashes.subarray(sub.blockOffsets[i], sub.blockOffsets[i + 1]))).toEqual(
        Array.from(table.blockHashes.subarray(table.blockOffsets[r], table.blockOffsets[r + 1])),
      );
      expect(sub.turn[i]).toBe(table.turn[r]); // whole sessions: turns unchanged
      const next = sub.nextTurnRow[i];
      expect(next === -1 ? -1 : odd[next]).toBe(table.nextTurnRow[r]);
    }
    for (const row of sub.sessionFirstRow) minStart = Math.min(minStart, sub.timestampMs[row]);
    expect(minStart).toBe(0);
  });

  it("refuses a session that would start on a turn without a timestamp under open-loop load", async () => {
    const table = await loadWorkload(spec());
    const later = Array.from({ length: table.count }, (_, r) => r).find(
      (r) => table.turn[r] > 0 && Number.isNaN(table.timestampMs[r]),
    );
    expect(later).toBeDefined();
    expect(() => selectRows(table, [later!], true)).toThrow(/has no timestamp/);
    expect(selectRows(table, [later!], false).turn[0]).toBe(0);
  });
});
