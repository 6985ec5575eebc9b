/**
 * Golden prediction.json files (issue 15): each case of test/golden/cases.ts runs through the CLI
 * and is compared key by key against test/golden/<name>.prediction.json. Every differing path is
 * reported (`summary.ttft_ms_p99: 123.4 → 125.0`); missing and extra keys are differences too;
 * numbers compare exactly (a run is a deterministic function of config and trace), so this also
 * pins determinism across runs and hosts. Only the host-time paths of `HOST_TIME_PATHS` are left
 * out (documented there).
 *
 * A golden may only change in a commit that explains why. Regenerate with
 * `node --import tsx scripts/update-goldens.ts [name ...]`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { predictionSchema } from "../../src/output/prediction.js";
import {
  diffJson,
  GOLDEN_CASES,
  goldenPath,
  HOST_TIME_PATHS,
  type Json,
  runCase,
  stripHostTime,
} from "../golden/cases.js";

const MAX_SHOWN = 40;

function report(name: string, diffs: string[]): string {
  const shown = diffs.slice(0, MAX_SHOWN).map((d) => `  ${d}`);
  if (diffs.length > MAX_SHOWN) shown.push(`  … and ${diffs.length - MAX_SHOWN} more`);
  return (
    `${name}: ${diffs.length} path(s) differ from test/golden/${name}.prediction.json (golden → actual):\n` +
    `${shown.join("\n")}\n` +
    "If the change is intended, run `node --import tsx scripts/update-goldens.ts " +
    `${name}\` and explain why in the commit.`
  );
}

describe("golden prediction.json", () => {
  it("excludes exactly the summary's host-time keys (HOST_TIME_KEYS, docs/metrics.md), their engine-stack top-level copies and the retune sweep's wall time", () => {
    const summaryPaths = HOST_TIME_PATHS.filter((p) => p.startsWith("summary."));
    expect([...summaryPaths].sort()).toEqual(HOST_TIME_KEYS.map((k) => `summary.${k}`).sort());
    const topLevel = HOST_TIME_PATHS.filter((p) => !p.includes("."));
    expect([...topLevel].sort()).toEqual([...HOST_TIME_KEYS].sort());
    expect(HOST_TIME_PATHS.filter((p) => !p.startsWith("summary.") && p.includes("."))).toEqual([
      "planner.retune_events[*].sweep_wall_s",
    ]);
  });

  it("strips a host-time path in every element of an array ([*])", () => {
    const doc: { [key: string]: Json } = {
      summary: { wall_time_ms: 1, processed_tokens_per_s: 2, processed_output_tokens_per_s: 3, n: 4 },
      planner: {
        retune_events: [
          { sweep_wall_s: 0.5, id: "a" },
          { sweep_wall_s: null, id: "b" },
        ],
      },
    };
    expect(stripHostTime(doc)).toEqual({
      summary: { n: 4 },
      planner: { retune_events: [{ id: "a" }, { id: "b" }] },
    });
  });

  it("the key-by-key diff names every differing, missing and extra path", () => {
    const golden: Json = { summary: { a: 1, b: 2, c: [1, 2] }, run: { x: "y" } };
    const actual: Json = { summary: { a: 1, b: 2.5, c: [1, 3, 4], d: 0 }, run: null };
    expect(diffJson(golden, actual)).toEqual([
      "summary.b: 2 → 2.5",
      "summary.c: length 2 → 3",
      "summary.c[1]: 2 → 3",
      "summary.d: extra (actual 0)",
      'run: {"x":"y"} → null (object → null)',
    ]);
    expect(diffJson({ a: { b: 1 } }, { a: {} })).toEqual(["a.b: missing (golden 1)"]);
  });

  for (const c of GOLDEN_CASES) {
    it(`${c.name}: ${c.about}`, async () => {
      const golden = JSON.parse(readFileSync(goldenPath(c), "utf8")) as { [key: string]: Json };
      const { doc } = await runCase(c);
      // The file as written, host time included, is a prediction of the strict contract (src/output/).
      const parsed = predictionSchema.safeParse(doc);
      expect(parsed.success ? [] : parsed.error.issues, `${c.name}: strict schema`).toEqual([]);
      // The excluded keys are still there, as numbers: only their values go unchecked.
      const summary = doc["summary"] as { [key: string]: Json };
      for (const key of HOST_TIME_KEYS) expect(typeof summary[key], `summary.${key}`).toBe("number");
      const actual = stripHostTime(doc);
      const diffs = diffJson(golden, actual);
      if (diffs.length > 0) expect.fail(report(c.name, diffs));
      // Same values: the key order must match too (prediction.json byte-identical but for host time).
      expect(JSON.stringify(actual), `${c.name}: key order`).toBe(JSON.stringify(golden));
    });
  }
});
