/**
 * Reading prediction.json files fleetsim may not have written (src/output/read.ts, tolerant.ts):
 * the strict contract made tolerant, so the HTML report draws what an older or foreign file has.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { predictionFileSchema, predictionReadSchema } from "../../src/output/read.js";
import { NON_NUMERIC_SUMMARY_KEYS } from "../../src/output/summary.js";
import { PredictionFileError, readPredictionFile } from "../../src/report/html/readPrediction.js";
import { GOLDEN_CASES, goldenPath } from "../golden/cases.js";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const golden = (name: string): Record<string, unknown> => {
  const c = GOLDEN_CASES.find((x) => x.name === name);
  if (c === undefined) throw new Error(name);
  return JSON.parse(readFileSync(goldenPath(c), "utf8")) as Record<string, unknown>;
};

describe("the tolerant reading schema", () => {
  for (const name of ["seed-disaggregated-planner", "retune-router", "synthetic-sessions"]) {
    it(`${name}: a prediction fleetsim wrote reads back unchanged, the summary as its numbers`, () => {
      const doc = golden(name) as { summary: Record<string, unknown> };
      const numbers = Object.fromEntries(
        Object.entries(doc.summary).filter(([, v]) => typeof v === "number"),
      );
      // The reader takes the summary's numbers (docs/metrics.md "Provenance, eviction and power").
      // kv_cache_precision is written only for roles whose KV capacity is an op-level memory estimate.
      for (const key of NON_NUMERIC_SUMMARY_KEYS)
        if (key !== "kv_cache_precision") expect(doc.summary).toHaveProperty(key);
      expect(Object.keys(doc.summary).filter((k) => !(k in numbers))).toEqual(
        NON_NUMERIC_SUMMARY_KEYS.filter((k) => k in doc.summary && typeof doc.summary[k] !== "number").sort(),
      );
      expect(predictionReadSchema().parse(doc)).toEqual({ ...doc, summary: numbers });
    });
  }

  it("drops a wrong-typed field and unknown keys, keeps the rest of the object", () => {
    const doc = golden("kv-router") as { run: Record<string, unknown>; coverage: Record<string, unknown> };
    doc.run["model"] = 7;
    doc.run["aisimulate_only"] = { x: 1 };
    doc.coverage["per_request_records"] = "none";
    const read = predictionReadSchema().parse(doc);
    expect(read.run?.model).toBeUndefined();
    expect(read.run).not.toHaveProperty("aisimulate_only");
    expect(read.run?.hardware).toBe("h200_sxm");
    expect(read.coverage).toEqual({
      capture_per_request: false,
      capture_planner_details: false,
      capture_canonical_evidence: false,
    });
  });

  it("an array of objects keeps the elements that read; a numeric series with one bad value is dropped whole", () => {
    const doc = golden("seed-disaggregated-planner") as {
      planner: { ticks: unknown[] };
      timeseries: Record<string, unknown[]>;
    };
    const ticks = doc.planner.ticks.length;
    doc.planner.ticks.push(null, 3, "tick");
    doc.timeseries["arrivals"][0] = "many";
    const read = predictionReadSchema().parse(doc);
    expect(read.planner?.ticks?.length).toBe(ticks);
    expect(read.timeseries?.arrivals).toBeUndefined();
    expect(read.timeseries?.completions?.length).toBe(doc.timeseries["completions"].length);
  });

  it("the summary keeps every finite number, whatever its key (foreign files have their own)", () => {
    const read = predictionReadSchema().parse({
      summary: { reference_only_ms: 3, mean_ttft_ms: 1, note: "x" },
    });
    expect(read.summary).toEqual({ reference_only_ms: 3, mean_ttft_ms: 1 });
    expect(predictionReadSchema().parse([1, 2])).toEqual({});
  });

  it("identity: an object with a summary object, else the issue's JSON path", () => {
    expect(predictionFileSchema.safeParse({ summary: {} }).success).toBe(true);
    const r = predictionFileSchema.safeParse({ summary: [1] });
    expect(r.error?.issues.map((i) => i.path.join("."))).toEqual(["summary"]);
  });
});

describe("readPredictionFile and fleetsim report on other files", () => {
  it("a summary that is not an object is a user error naming the file and the JSON path", () => {
    const file = join(tempDir("fleetsim-read-"), "prediction.json");
    writeFileSync(file, '{"summary": [1, 2]}\n');
    expect(() => readPredictionFile(file)).toThrow(PredictionFileError);
    expect(() => readPredictionFile(file)).toThrow(
      `${file} is not a fleetsim prediction.json: expected an object with a "summary" object (at summary: `,
    );
  });

  it("a foreign prediction.json (no run, no timeseries, keys fleetsim does not write) still renders", async () => {
    const dir = tempDir("fleetsim-read-");
    const file = join(dir, "prediction.json");
    const planner = golden("seed-aggregated-planner")["planner"] as Record<string, unknown>;
    const foreign = {
      summary: { num_requests: 10, completed_requests: 10, mean_ttft_ms: 12.5, reference_metric: 1 },
      planner: { ...planner, reference_extension: { a: 1 } },
      per_request: null,
      coverage: {
        capture_per_request: false,
        capture_planner_details: true,
        capture_canonical_evidence: true,
      },
    };
    writeFileSync(file, JSON.stringify(foreign));
    const r = await cli("report", file, "-o", join(dir, "report.html"));
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("reference_metric");
    expect(html).toContain("has no time series");
  });
});
