/**
 * Result files (shard/results.ts): first writer wins, a result already there is kept byte for
 * byte, temporaries are never read as results, and a damaged file is told apart from a missing one.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Prediction } from "../../src/report/prediction.js";
import { publishResult, readResult, resultDocument, resultPath } from "../../src/shard/results.js";
import { tempDir } from "../helpers/specs.js";

const HASH = "a".repeat(64);

function prediction(completed: number): Prediction {
  return {
    summary: {
      completed_requests: completed,
      wall_time_ms: 12.5,
      processed_tokens_per_s: 9,
      processed_output_tokens_per_s: 3,
    },
    planner: { retune_events: [{ sweep_wall_s: 1.25, window: 1 }] },
  } as unknown as Prediction;
}

describe("publishResult", () => {
  it("writes once; a second writer (a duplicate pod, a rerun) keeps the first result's bytes", () => {
    const dir = tempDir("fleetsim-results-");
    mkdirSync(join(dir, "results"));
    const first = resultDocument(HASH, "0.1.0", prediction(5), ["w"]);
    expect(publishResult(dir, first)).toBe("written");
    const bytes = readFileSync(resultPath(dir, HASH), "utf8");
    expect(publishResult(dir, resultDocument(HASH, "0.1.0", prediction(6), []))).toBe("kept");
    expect(readFileSync(resultPath(dir, HASH), "utf8")).toBe(bytes);
    // No temporary left behind by either.
    expect(readdirSync(join(dir, "results"))).toEqual([`${HASH}.json`]);
  });

  it("leaves out the host-time values: the same run on any host writes the same bytes", () => {
    const r = resultDocument(HASH, "0.1.0", prediction(5), []);
    expect(r.prediction["summary"]).toEqual({ completed_requests: 5 });
    expect((r.prediction["planner"] as { retune_events: unknown[] }).retune_events).toEqual([
      { sweep_wall_s: null, window: 1 },
    ]);
  });
});

describe("readResult", () => {
  it("tells a missing result, a damaged one and another point's apart; temporaries are not results", () => {
    const dir = tempDir("fleetsim-results-");
    mkdirSync(join(dir, "results"));
    writeFileSync(join(dir, "results", `.${HASH}.99.1.tmp`), "{}");
    expect(readResult(dir, HASH)).toEqual({ ok: false, missing: true });
    writeFileSync(resultPath(dir, HASH), '{"schema": "fleetsim.sweep-re');
    expect(readResult(dir, HASH)).toEqual({
      ok: false,
      missing: false,
      problem: "not valid JSON (cut short?)",
    });
    const other = "b".repeat(64);
    writeFileSync(resultPath(dir, HASH), JSON.stringify(resultDocument(other, "0.1.0", prediction(1), [])));
    expect(readResult(dir, HASH)).toMatchObject({ ok: false, problem: `it holds point ${other}'s result` });
    writeFileSync(resultPath(dir, HASH), JSON.stringify(resultDocument(HASH, "0.1.0", prediction(1), [])));
    expect(readResult(dir, HASH)).toMatchObject({ ok: true, result: { point_hash: HASH } });
  });
});
