/**
 * Estimated GPU systems (src/hardware/variants.ts, docs/perf-tables.md "Derived systems"): chips
 * without op tables of their own — H20-3e, GB200, MI300X — priced from their datasheet by the
 * roofline over the measured system of the closest architecture, and labelled `estimated`
 * everywhere a run reports its hardware (the run block, the fleet block, the report, `estimate`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gpuSpec, hardwareData, knownGpuIds, measuredGpuIds } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { cli, predictExample } from "../helpers/cli.js";

const ESTIMATED = ["h20_3e", "gb200", "mi300x"] as const;

describe("the catalog's tiers", () => {
  it("labels every system with measured tables calibrated and every derived one estimated, naming its base", () => {
    for (const id of measuredGpuIds())
      expect(hardwareData(id)).toMatchObject({ tier: "calibrated", base: null });
    for (const id of knownGpuIds().filter((g) => !measuredGpuIds().includes(g))) {
      const d = hardwareData(id);
      expect(d.tier).toBe("estimated");
      expect(measuredGpuIds()).toContain(d.base);
    }
    expect(knownGpuIds()).toEqual(expect.arrayContaining([...ESTIMATED, "a100_sxm_40gb"]));
    expect(hardwareData("h20_3e").basis).toBe("datasheet roofline over h200_sxm's measured op tables");
  });

  it("carries each chip's datasheet figures, not its base's", () => {
    expect(gpuSpec("h20_3e")).toMatchObject({ bf16Flops: 148e12, memBandwidth: 4e12, powerW: 400 });
    expect(gpuSpec("gb200")).toMatchObject({
      bf16Flops: 2.5e15,
      memBandwidth: 8e12,
      interNodeBandwidth: 900e9,
    });
    expect(gpuSpec("mi300x")).toMatchObject({
      bf16Flops: 1307.4e12,
      memBandwidth: 5.3e12,
      memCapacityBytes: 192e9,
    });
  });
});

describe("tables rescaled by the roofline", () => {
  const h200 = loadCompactTables("h200_sxm");
  const h20 = loadCompactTables("h20_3e");

  it("moves a compute-bound GEMM and prefill attention with FLOP/s, a decode GEMM with HBM bandwidth", () => {
    const flops = 989e12 / 148e12;
    const big = (t: typeof h200) => t.gemm("bfloat16", 8192, 8192, 8192);
    expect(big(h20) / big(h200)).toBeCloseTo(flops, 6);
    const ctx = (t: typeof h200) =>
      t.contextAttention({ numHeads: 32, numKvHeads: 8, headDim: 128, kvDtype: "bfloat16" }, 1, 4096, 0);
    expect(ctx(h20) / ctx(h200)).toBeCloseTo(flops, 6);
    const small = (t: typeof h200) => t.gemm("bfloat16", 1, 28672, 4096);
    expect(small(h20) / small(h200)).toBeCloseTo(4.8 / 4.0, 3);
    const decode = (t: typeof h200) =>
      t.generationAttention({ numHeads: 32, numKvHeads: 8, headDim: 128, kvDtype: "bfloat16" }, 64, 4096);
    expect(decode(h20) / decode(h200)).toBeCloseTo(4.8 / 4.0, 3);
  });

  it("keeps NVLink all-reduces where the link is the same, and moves the ring's bandwidth term where not", () => {
    const b200 = loadCompactTables("b200_sxm");
    const gb200 = loadCompactTables("gb200");
    expect(gb200.allReduce(8, 1 << 24)).toBe(b200.allReduce(8, 1 << 24));
    // An NVL72 rack: 16 GPUs on the same NVLink (the 8-GPU figure × the ring factor), where 16
    // B200s cross nodes at a ninth of the bandwidth.
    const ring = (15 / 16) * (8 / 7);
    expect(gb200.allReduce(16, 1 << 24)).toBeCloseTo(b200.allReduce(8, 1 << 24) * ring, 9);
    expect(b200.allReduce(16, 1 << 24)).toBeCloseTo(b200.allReduce(8, 1 << 24) * ring * 9, 9);
    // MI300X: 448 vs 450 GB/s per direction: the ring's 2 (n − 1) / n of the message at the new rate.
    const mi = loadCompactTables("mi300x");
    const bytes = 1 << 26;
    const moved = ((2 * 7 * bytes) / 8) * (1 / 448e9 - 1 / 450e9) * 1000;
    expect(mi.allReduce(8, bytes) - h200.allReduce(8, bytes)).toBeCloseTo(moved, 9);
  });
});

describe("runs on an estimated system", () => {
  it.each(ESTIMATED)(
    "%s runs, says estimated on stderr, in the fleet block and in prediction.json",
    async (gpu) => {
      const r = await predictExample([`engine.hardware=${gpu}`], "--html");
      const out = r.outDir;
      expect(r.code).toBe(0);
      expect(r.err).toContain(`fleetsim: warning: ${gpu} has no measured op tables: its timing is estimated`);
      expect(r.out).toMatch(
        new RegExp(`Hardware: ${gpu} \\(estimated: datasheet roofline over \\w+'s measured op tables\\)`),
      );
      const doc = r.doc;
      const { tier, base, basis } = hardwareData(gpu);
      expect(doc.run.topology.aggregated.hardware_data).toEqual({ tier, base, basis });
      expect(doc.summary.completed_requests).toBe(doc.summary.num_requests);
      const html = readFileSync(join(out, "report.html"), "utf8");
      expect(html).toContain(`${gpu} has no measured op tables`);
    },
  );

  it("a calibrated system says calibrated and warns nothing", async () => {
    const r = await predictExample([]);
    expect(r.err).not.toContain("no measured op tables");
    expect(r.out).toContain("Hardware: h200_sxm (calibrated: measured op tables)");
  });

  it("estimate prints which tier it priced from", async () => {
    const args = ["--model", "nvidia/Llama-3.1-8B-Instruct-FP8", "--batch", "8", "--context", "2048"];
    const est = await cli("estimate", ...args, "--hardware", "mi300x");
    expect(est.out).toContain(
      "Hardware data: estimated (datasheet roofline over h200_sxm's measured op tables)",
    );
    const cal = await cli("estimate", ...args, "--hardware", "h200_sxm", "--format", "json");
    expect(JSON.parse(cal.out).hardware_data).toEqual({
      tier: "calibrated",
      base: null,
      basis: "measured op tables",
    });
  });
});
