/**
 * The committed derived files (src/hardware/gpus.json, src/hardware/calibration/<gpu>.json) must
 * equal what scripts/calibrate.ts derives now from ../shared/perf-data.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Calibration } from "../../src/hardware/derive.js";
import { deriveCalibration } from "../../src/hardware/derive.js";
import { PERF_DATA, ROOT } from "./data.js";

const HW = resolve(ROOT, "src/hardware");
const FIX = "run `node --import tsx scripts/calibrate.ts` and commit the result";

describe("committed calibration = derivation from ../shared/perf-data", () => {
  let derived: Calibration;

  beforeAll(async () => {
    if (!existsSync(PERF_DATA)) {
      throw new Error(
        `missing ${PERF_DATA}: the shared perf-data folder must sit beside the repo (../shared)`,
      );
    }
    derived = await deriveCalibration(PERF_DATA);
  }, 120_000);

  it("gpus.json", () => {
    const committed: unknown = JSON.parse(readFileSync(resolve(HW, "gpus.json"), "utf8"));
    expect(committed, `src/hardware/gpus.json is stale: ${FIX}`).toEqual(derived.gpus);
  });

  it("calibration/<gpu>.json, one per GPU and nothing else", () => {
    // The backends' own tables live in calibration/<backend>/ (scripts/derive-backend-tables.ts,
    // from AIConfigurator's repository rather than the perf data: test/hardware/backendTables.test.ts),
    // vLLM's measured MLA module in calibration/mla/ (scripts/derive-mla-module-tables.ts, from the
    // same repository: test/hardware/mlaModule.test.ts).
    const files = readdirSync(resolve(HW, "calibration"))
      .filter((f) => !["sglang", "trtllm", "mla"].includes(f))
      .sort();
    expect(files, `calibration files differ from the GPUs in perf-data: ${FIX}`).toEqual(
      Object.keys(derived.tables)
        .sort()
        .map((g) => `${g}.json`),
    );
    for (const [gpu, table] of Object.entries(derived.tables)) {
      const committed: unknown = JSON.parse(readFileSync(resolve(HW, "calibration", `${gpu}.json`), "utf8"));
      expect(committed, `src/hardware/calibration/${gpu}.json is stale: ${FIX}`).toEqual(table);
    }
  });

  // 300 KiB before the balanced MoE rows of engine.enable_eplb (about 40 KiB per GPU with MoE
  // tables); the file is parsed whole at start-up, its grids decoded only when queried.
  it("compact tables stay small (≤ 350 KiB per GPU)", () => {
    for (const gpu of Object.keys(derived.tables)) {
      const bytes = readFileSync(resolve(HW, "calibration", `${gpu}.json`)).length;
      expect(bytes, `${gpu}.json is ${(bytes / 1024).toFixed(0)} KiB`).toBeLessThanOrEqual(350 * 1024);
    }
  });
});
