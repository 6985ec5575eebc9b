/**
 * Reading prediction.json files fleetsim may not have written (src/output/read.ts, tolerant.ts):
 * the strict contract made tolerant, so the HTML report draws what an older or foreign file has.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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
    expect(r.err).toBe(
      `fleetsim: note: ${file} has no run, timeseries (an older fleetsim's or the reference's prediction.json): what they hold is left out\n`,
    );
    expect(r.code).toBe(0);
    const html = readFileSync(join(dir, "report.html"), "utf8");
    expect(html).toContain("reference_metric");
    expect(html).toContain("has no time series");
  });
});

describe("a prediction.json that breaks the output contract (exit 2, the key named, nothing written)", () => {
  const broken: readonly [string, unknown, string][] = [
    ["a string", "12", "summary.mean_ttft_ms: expected number, received string"],
    ["null", null, "summary.mean_ttft_ms: expected number, received null"],
    ["-1e308", -1e308, "summary.mean_ttft_ms: -1e+308 is negative (a count, a duration, a rate or a cost)"],
  ];
  for (const [what, value, message] of broken) {
    it(`a summary time that is ${what}: report and compare refuse it`, async () => {
      const dir = tempDir("fleetsim-read-");
      const good = join(dir, "good.json");
      const bad = join(dir, "bad.json");
      const doc = golden("kv-router") as { summary: Record<string, unknown> };
      writeFileSync(good, JSON.stringify(doc));
      doc.summary["mean_ttft_ms"] = value;
      writeFileSync(bad, JSON.stringify(doc));
      const report = await cli("report", bad, "-o", join(dir, "report.html"));
      expect(report.code).toBe(2);
      expect(report.err).toBe(`fleetsim: error: ${bad} breaks the prediction.json contract at ${message}\n`);
      expect(existsSync(join(dir, "report.html"))).toBe(false);
      const compare = await cli("compare", good, bad, "-o", join(dir, "compare.html"));
      expect(compare.code).toBe(2);
      expect(compare.err).toContain(`${bad} breaks the prediction.json contract at summary.mean_ttft_ms`);
      expect(compare.out).toBe("");
      expect(existsSync(join(dir, "compare.html"))).toBe(false);
    });
  }

  it("a section of the wrong kind is refused; a signed summary key may be negative", () => {
    const dir = tempDir("fleetsim-read-");
    const file = join(dir, "prediction.json");
    const doc = golden("kv-router") as Record<string, unknown> & { summary: Record<string, unknown> };
    doc.summary["saturation_backlog_growth"] = -2.5;
    writeFileSync(file, JSON.stringify(doc));
    expect(readPredictionFile(file).summary?.["saturation_backlog_growth"]).toBe(-2.5);
    doc["timeseries"] = "none";
    writeFileSync(file, JSON.stringify(doc));
    expect(() => readPredictionFile(file)).toThrow(
      `${file} breaks the prediction.json contract at timeseries: expected record, received string`,
    );
  });

  it("a byte-order mark before the JSON is read past, as for configs and traces", async () => {
    const dir = tempDir("fleetsim-read-");
    const file = join(dir, "prediction.json");
    writeFileSync(file, `\uFEFF${JSON.stringify(golden("kv-router"))}`);
    const r = await cli("report", file, "-o", join(dir, "report.html"));
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, "report.html"))).toBe(true);
  });
});

describe("aisimulate's flat engine-stack layout", () => {
  /** What the reference's engine stack writes: the summary keys at the top level, beside its sections. */
  function flatReference(): Record<string, unknown> {
    const { summary } = golden("kv-router") as { summary: Record<string, unknown> };
    return { ...summary, per_request: null, details: { memory: {} }, memory_diagnostics: { aggregated: {} } };
  }

  it("reads as its summary, with a note; report and compare render it", async () => {
    const dir = tempDir("fleetsim-read-");
    const file = join(dir, "prediction.json");
    const flat = flatReference();
    writeFileSync(file, JSON.stringify(flat));
    const notes: string[] = [];
    const read = readPredictionFile(file, (line) => notes.push(line));
    expect(read.summary?.["mean_ttft_ms"]).toBe(flat["mean_ttft_ms"]);
    expect(read.summary).not.toHaveProperty("memory_diagnostics");
    expect(notes[0]).toBe(
      `${file} is aisimulate's engine-stack layout (its summary keys at the top level): read as its summary`,
    );
    const report = await cli("report", file, "-o", join(dir, "report.html"));
    expect(report.code).toBe(0);
    expect(existsSync(join(dir, "report.html"))).toBe(true);
    const other = join(dir, "fleetsim.json");
    writeFileSync(other, JSON.stringify(golden("kv-router")));
    const compare = await cli("compare", file, other);
    expect(compare.code).toBe(0);
    expect(compare.out).toContain("TTFT mean (ms)");
  });

  it("is held to the contract like any summary", () => {
    const file = join(tempDir("fleetsim-read-"), "prediction.json");
    writeFileSync(file, JSON.stringify({ ...flatReference(), mean_ttft_ms: null }));
    expect(() => readPredictionFile(file)).toThrow(
      `${file} breaks the prediction.json contract at summary.mean_ttft_ms: expected number, received null`,
    );
  });

  it("a document that is neither layout is still refused", () => {
    const file = join(tempDir("fleetsim-read-"), "prediction.json");
    writeFileSync(file, JSON.stringify({ num_requests: "10" }));
    expect(() => readPredictionFile(file)).toThrow("is not a fleetsim prediction.json");
  });
});
