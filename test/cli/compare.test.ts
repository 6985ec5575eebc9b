import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type CompareRow, formatRowChange, formatValue, rowChange } from "../../src/report/compare.js";
import { cli, setFlags } from "../helpers/cli.js";
import { configFile, engineYaml, fixedTiming } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

const dir = tempDir("fleetsim-compare-");
const runs = { base: join(dir, "base", "prediction.json"), big: join(dir, "big", "prediction.json") };

beforeAll(async () => {
  const rows = Array.from({ length: 30 }, (_, i) =>
    JSON.stringify({ timestamp: i * 20, input_length: 500, output_length: 10, hash_ids: [i % 4, 20 + i] }),
  );
  const { config } = configFile(
    `traffic:
  source: {type: trace, format: mooncake, paths: [trace.jsonl], block_size: 512}
  load: {type: trace_timestamps}
${engineYaml({
  contextLength: 4096,
  replicas: 1,
  blocks: 256,
  timing: fixedTiming(30, 4),
})}evaluation: {sla: {ttft_ms: 60, itl_ms: 10}}
`,
    { dir, files: { "trace.jsonl": `${rows.join("\n")}\n` } },
  );
  for (const [name, replicas] of [
    ["base", 1],
    ["big", 3],
  ] as const) {
    const r = await cli(
      "predict",
      "--stack",
      "engine",
      "-c",
      config,
      ...setFlags(`engine.workers.aggregated.parallelism.replicas=${replicas}`),
      "--output-dir",
      join(dir, name),
    );
    expect(r.code).toBe(0);
  }
});

describe("fleetsim compare", () => {
  it("prints the runs side by side with each later run's change against the first", async () => {
    const r = await cli("compare", runs.base, runs.big);
    expect(r.code).toBe(0);
    const lines = r.out.split("\n");
    expect(lines[0]).toBe("fleetsim compare");
    expect(lines[1]).toMatch(/^Metric\s+base\s+big\s+Δ vs base$/);
    const row = (label: string) => lines.find((l) => l.startsWith(label)) ?? "";
    const base = JSON.parse(readFileSync(runs.base, "utf8")).summary;
    const big = JSON.parse(readFileSync(runs.big, "utf8")).summary;
    const change = ((big.gpu_hours - base.gpu_hours) / base.gpu_hours) * 100;
    expect(row("GPU-hours")).toContain(`${change > 0 ? "+" : ""}${change.toFixed(1)}%`);
    expect(row("Peak GPUs")).toMatch(/\s1\s+3\s+\+200\.0%$/);
    expect(row("SLA attainment (%)")).not.toBe("");
    expect(row("Cost (USD)")).not.toBe("");
    expect(r.out).toContain(`base: base = ${runs.base}`);
  });

  it("prints small GPU-hours with three significant digits and SLA attainment changes in points", async () => {
    const r = await cli("compare", runs.base, runs.big);
    const lines = r.out.split("\n");
    const row = (label: string) => lines.find((l) => l.startsWith(label)) ?? "";
    const base = JSON.parse(readFileSync(runs.base, "utf8")).summary;
    const big = JSON.parse(readFileSync(runs.big, "utf8")).summary;
    // Both runs last under a minute: GPU-hours well below 0.01, each printed to 3 significant digits.
    expect(base.gpu_hours).toBeLessThan(0.01);
    expect(row("GPU-hours")).toContain(Number(base.gpu_hours.toPrecision(3)).toString());
    expect(row("GPU-hours")).toContain(Number(big.gpu_hours.toPrecision(3)).toString());
    const attainment = (s: { goodput_completed_requests: number; completed_requests: number }) =>
      (100 * s.goodput_completed_requests) / s.completed_requests;
    const points = attainment(big) - attainment(base);
    expect(row("SLA attainment (%)")).toMatch(
      new RegExp(`${points > 0 ? "\\+" : ""}${points.toFixed(1).replace("-", "-?")} pp$`),
    );
  });

  it("computes changes from unrounded values: relative, or percentage points for a percentage row", () => {
    const gpuHours: CompareRow = {
      label: "GPU-hours",
      values: [0.0065, 0.0042],
      better: "lower",
      format: "fine",
    };
    expect(formatValue(0.0065, "fine")).toBe("0.0065");
    expect(formatValue(0.004249, "fine")).toBe("0.00425");
    expect(formatValue(12.5, "fine")).toBe("12.50");
    expect(formatRowChange(gpuHours, rowChange(gpuHours, 0.0065, 0.0042))).toBe("-35.4%");
    const sla: CompareRow = {
      label: "SLA attainment (%)",
      values: [90, 94],
      better: "higher",
      change: "points",
    };
    expect(rowChange(sla, 90, 94)).toBe(4);
    expect(formatRowChange(sla, rowChange(sla, 90, 94))).toBe("+4.0 pp");
    expect(formatRowChange(sla, rowChange(sla, 94, 90))).toBe("-4.0 pp");
    expect(formatRowChange(sla, rowChange(sla, null, 90))).toBe("N/A");
  });

  it("writes a self-contained page with every run overlaid, and needs two files", async () => {
    const page = join(dir, "compare.html");
    const r = await cli("compare", runs.base, runs.big, "-o", page);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Saved comparison page to: ${page}`);
    const html = readFileSync(page, "utf8");
    const data = JSON.parse(html.split('id="fleetsim-data">')[1].split("</script>")[0]) as {
      charts: { id: string; option: { series: { name: string }[] } }[];
    };
    expect(data.charts.map((c) => c.id)).toEqual([
      "compare-replicas",
      "compare-gpus",
      "compare-gpu-hours",
      "compare-ttft",
      "compare-itl",
      "compare-sla",
    ]);
    expect(data.charts[0].option.series.map((s) => s.name)).toEqual(["base", "big"]);
    expect(html).not.toMatch(/<script\b[^>]*\bsrc\s*=/);
    const one = await cli("compare", runs.base);
    expect(one.code).toBe(2);
    expect(one.err).toContain("at least two");
    const missing = await cli("compare", runs.base, join(dir, "nope.json"));
    expect(missing.code).toBe(2);
    expect(existsSync(join(dir, "nope.json"))).toBe(false);
  });
});
