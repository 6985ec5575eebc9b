/**
 * The GPU catalog and the compact (committed) op tables' coverage; the parquet tables they are
 * derived from are tested against the measured rows in test/shared-data/perf.tables.test.ts.
 */
import { describe, expect, it } from "vitest";
import { gpuSpec, knownGpuIds, measuredGpuIds } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { HardwareError } from "../../src/hardware/errors.js";

describe("GPU catalog", () => {
  it("knows the five calibrated GPUs, the A100 40 GB variant and the estimated systems", () => {
    expect(knownGpuIds()).toEqual([
      "a100_sxm",
      "a100_sxm_40gb",
      "b200_sxm",
      "gb200",
      "h100_sxm",
      "h200_sxm",
      "h20_3e",
      "l40s",
      "mi300x",
    ]);
    expect(measuredGpuIds()).toEqual(["a100_sxm", "b200_sxm", "h100_sxm", "h200_sxm", "l40s"]);
    expect(gpuSpec("h200_sxm").memBandwidth).toBe(4.8e12);
    expect(gpuSpec("a100_sxm").perfDataVersion).toBe("0.14.0");
  });

  it("an unknown GPU is a HardwareError that lists the known ids", () => {
    expect(() => gpuSpec("h300")).toThrow(HardwareError);
    expect(() => gpuSpec("h300")).toThrow(
      /a100_sxm, a100_sxm_40gb, b200_sxm, gb200, h100_sxm, h200_sxm, h20_3e, l40s, mi300x/,
    );
    expect(() => loadCompactTables("h300")).toThrow(HardwareError);
  });

  it("A100 has no FP8 tables; L40S all-reduce comes from NCCL", () => {
    const a100 = loadCompactTables("a100_sxm");
    expect(() => a100.gemm("fp8", 16, 4096, 4096)).toThrow(/no fp8 GEMM table for a100_sxm/);
    const l40s = loadCompactTables("l40s");
    expect(l40s.allReduce(4, 1 << 20)).toBeGreaterThan(0);
  });
});
