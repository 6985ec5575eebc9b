import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { externalReferences, fixturePrediction, payloadOf } from "../browser/reportFixture.js";
import { cli, cliPredict } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";

const EXAMPLE = join(import.meta.dirname, "../..", "examples", "aggregated.yaml");

/** A prediction.json of the fixture in a fresh directory. */
function fixtureFile(): { dir: string; json: string } {
  const dir = tempDir("fleetsim-report-cli-");
  const json = join(dir, "prediction.json");
  writeFileSync(json, JSON.stringify(fixturePrediction(), null, 2));
  return { dir, json };
}

describe("fleetsim report", () => {
  it("writes report.html next to the JSON by default", async () => {
    const { dir, json } = fixtureFile();
    const r = await cli("report", json);
    // The fixture, written by hand, has no `run` block: the report says so and draws the rest.
    expect(r.err).toBe(
      `fleetsim: note: ${json} has no run (an older fleetsim's or the reference's prediction.json): what they hold is left out\n`,
    );
    expect(r.code).toBe(0);
    const out = join(dir, "report.html");
    expect(r.out).toBe(`Saved HTML report to: ${out}\n`);
    const html = readFileSync(out, "utf8");
    expect(payloadOf(html).charts.length).toBeGreaterThan(0);
    expect(externalReferences(html)).toEqual([]);
  });

  it("-o writes the named file (parents created), or report.html inside a directory; --title and --sla-* apply", async () => {
    const { dir, json } = fixtureFile();
    const file = join(dir, "deep", "er", "run.html");
    const r = await cli("report", json, "-o", file, "--title", "Run 42", "--sla-ttft-ms", "750");
    expect(r.code).toBe(0);
    const html = readFileSync(file, "utf8");
    expect(html).toContain("<title>Run 42</title>");
    expect(
      payloadOf(html)
        .charts.find((c) => c.id === "ttft")
        ?.option.series.map((s) => s.name),
    ).toContain("SLA 750 ms");
    const outDir = join(dir, "reports");
    mkdirSync(outDir);
    expect((await cli("report", json, "--output", outDir)).code).toBe(0);
    expect(readdirSync(outDir)).toEqual(["report.html"]);
  });

  it("a missing file is a user error (exit 2) naming the file", async () => {
    const dir = tempDir("fleetsim-report-cli-");
    const missing = join(dir, "nope.json");
    const r = await cli("report", missing);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`fleetsim: error: ${missing}: no such file\n`);
    expect(existsSync(join(dir, "report.html"))).toBe(false);
  });

  it("invalid JSON is a user error with line and column", async () => {
    const dir = tempDir("fleetsim-report-cli-");
    const bad = join(dir, "prediction.json");
    writeFileSync(bad, '{\n  "summary": {\n    "num_requests": 3,\n  }\n}\n');
    const r = await cli("report", bad);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `fleetsim: error: ${bad}: invalid JSON at line 4, column 3: unexpected "}", expected a property name in double quotes\n`,
    );
    expect(r.err).not.toContain("    at ");
  });

  it("JSON that is not a prediction, a directory, and bad flags are user errors", async () => {
    const dir = tempDir("fleetsim-report-cli-");
    const other = join(dir, "other.json");
    writeFileSync(other, "[1, 2]\n");
    const r1 = await cli("report", other);
    expect(r1.code).toBe(2);
    expect(r1.err).toContain('is not a fleetsim prediction.json: expected an object with a "summary" object');
    const r2 = await cli("report", dir);
    expect(r2.code).toBe(2);
    expect(r2.err).toContain("is a directory");
    const { json } = fixtureFile();
    const r3 = await cli("report", json, "--sla-ttft-ms", "-5");
    expect(r3.code).toBe(2);
    expect(r3.err).toContain("--sla-ttft-ms must be a positive number");
    expect((await cli("report")).code).toBe(2);
  });

  it("--help shows examples", async () => {
    const r = await cli("report", "--help");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Usage: fleetsim report [options] <prediction-json>");
    expect(r.out).toContain("Examples:\n  fleetsim report fleetsim-output/prediction.json");
    const p = await cli("predict", "--help");
    expect(p.out).toContain("--html");
    expect(p.out).toContain("--html --output-dir out/");
  });
});

describe("fleetsim predict --html", () => {
  let out: string;
  let first: { code: number; out: string; err: string };
  beforeAll(async () => {
    out = join(tempDir("fleetsim-predict-html-"), "out");
    first = await cliPredict(EXAMPLE, out, "--html");
  });

  it("writes report.html beside prediction.json and says so", () => {
    expect(first.err).toBe("");
    expect(first.code).toBe(0);
    expect(first.out.trimEnd().endsWith(`Saved HTML report to: ${join(out, "report.html")}`)).toBe(true);
    const html = readFileSync(join(out, "report.html"), "utf8");
    // examples/aggregated.yaml: no Planner, evaluation.sla {ttft_ms: 1500, itl_ms: 50}
    const ids = payloadOf(html).charts.map((c) => c.id);
    expect(ids).toEqual([
      "replicas",
      "ttft",
      "itl",
      "throughput",
      "sla-attainment",
      "queue-depth",
      "kv-utilization",
    ]);
    expect(
      payloadOf(html)
        .charts.find((c) => c.id === "itl")
        ?.option.series.map((s) => s.name),
    ).toContain("SLA 50 ms");
    expect(externalReferences(html)).toEqual([]);
  });

  it("--overwrite replaces report.html; a run without --html removes the stale one", async () => {
    const before = statSync(join(out, "report.html")).mtimeMs;
    const again = await cliPredict(EXAMPLE, out, "--overwrite", "--html");
    expect(again.code).toBe(0);
    expect(statSync(join(out, "report.html")).mtimeMs).toBeGreaterThanOrEqual(before);
    const plain = await cliPredict(EXAMPLE, out, "--overwrite");
    expect(plain.code).toBe(0);
    expect(existsSync(join(out, "report.html"))).toBe(false);
    expect(readdirSync(out).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
});
