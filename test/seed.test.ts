import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "./helpers/cli.js";
import { tempDir } from "./helpers/specs.js";

const TRACE = resolve("../shared/traces/mooncake-fast25/conversation_trace.jsonl");
const FIXED_CAPACITY = "engine.workers.aggregated.kv_cache.capacity={type: fixed, blocks: 14000}";

describe("seed walkthrough (aggregated, planner removed, polynomial timing) on the conversation trace", () => {
  it("has the shared trace beside the repository", () => {
    expect(existsSync(TRACE), `missing ${TRACE}: the shared data folder must sit beside the repo`).toBe(true);
  });

  it("refuses the memory-derived default capacity with a message that says what to do", async () => {
    const r = await cli("predict", "-c", "examples/seed-aggregated.yaml", "--output-dir", tempDir());
    expect(r.code).toBe(2);
    expect(r.err).toContain("engine.workers.aggregated.kv_cache.capacity.type");
    expect(r.err).toContain("capacity: {type: fixed, blocks: N}");
  });

  it("replays all 12,031 requests through 2 workers and reports consistent worker-seconds and GPU-hours", async () => {
    const out = join(tempDir(), "out");
    const r = await cli(
      "predict",
      "-c",
      "examples/seed-aggregated.yaml",
      "--output-dir",
      out,
      "--set",
      FIXED_CAPACITY,
    );
    expect(r.err.split("\n")[0]).toBe("");
    expect(r.code).toBe(0);
    const s = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")).summary;
    expect(s.num_requests).toBe(12031);
    expect(s.completed_requests).toBe(12031);
    expect(s.duration_ms).toBeLessThanOrEqual(3_600_000);
    expect(s.duration_ms).toBeGreaterThan(3_500_000);
    // Two workers provisioned from 0 to the last processed event (the last completion).
    expect(s.decode_worker_seconds).toBeCloseTo((2 * s.duration_ms) / 1000, 6);
    expect(s.gpu_hours).toBeCloseTo((s.decode_worker_seconds * s.decode_gpus_per_worker) / 3600, 9);
    expect(s.prefix_cache_reused_ratio).toBeGreaterThan(0);
    expect(s.goodput_completed_requests).toBeLessThanOrEqual(s.completed_requests);
    expect(s.num_ttft_samples).toBe(12031);
  });
});
