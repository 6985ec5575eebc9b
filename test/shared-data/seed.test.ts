import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../helpers/cli.js";
import { tempDir } from "../helpers/specs.js";
import { CONVERSATION } from "./data.js";

const TRACE = CONVERSATION;
const SEED = "examples/seed-aggregated.yaml";

interface Summary {
  [key: string]: number;
}

/** Runs the seed without its Planner (fixed replicas), as the timing-model issue specifies. */
async function predict(...sets: string[]): Promise<Summary> {
  const out = join(tempDir(), "out");
  const args = ["predict", "-c", SEED, "--output-dir", out, "--set", "planner={policy: disabled}"];
  for (const s of sets) args.push("--set", s);
  const r = await cli(...args);
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(readFileSync(join(out, "prediction.json"), "utf8")).summary as Summary;
}

/** What every run of the aggregated seed on the conversation trace must satisfy. */
function expectConsistent(s: Summary): void {
  expect(s.num_requests).toBe(12031);
  expect(s.completed_requests).toBeGreaterThan(0);
  expect(s.completed_requests).toBeLessThanOrEqual(12031);
  expect(s.duration_ms).toBeLessThanOrEqual(3_600_000);
  // Two workers provisioned from 0 to the last processed event.
  expect(s.decode_worker_seconds).toBeGreaterThanOrEqual((2 * s.duration_ms) / 1000 - 1e-6);
  expect(s.decode_worker_seconds).toBeLessThanOrEqual(2 * 3600 + 1e-6);
  expect(s.gpu_hours).toBeCloseTo((s.decode_worker_seconds * s.decode_gpus_per_worker) / 3600, 9);
  expect(s.decode_gpus_per_worker).toBe(1);
  expect(s.prefix_cache_reused_ratio).toBeGreaterThan(0);
  expect(s.goodput_completed_requests).toBeLessThanOrEqual(s.completed_requests);
}

describe("seed walkthrough (aggregated, planner disabled) on the conversation trace", () => {
  it("has the shared trace beside the repository", () => {
    expect(existsSync(TRACE), `missing ${TRACE}: the shared data folder must sit beside the repo`).toBe(true);
  });

  it("runs unchanged with default timing and default KV capacity", async () => {
    const s = await predict();
    expectConsistent(s);
    expect(s.completed_requests).toBe(12031);
  });

  it("runs with polynomial timing (the walking-skeleton acceptance case)", async () => {
    const s = await predict("engine.workers.aggregated.timing={type: polynomial}");
    expectConsistent(s);
  });
});
