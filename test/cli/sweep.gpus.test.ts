/**
 * Provisioned GPUs in a sweep's merge (docs/sweep.md "Merging"): an autoscaled point's `used_gpus`
 * is its deployment as configured (its starting GPUs, what `min_gpus` ranks by), and `peak_gpus`
 * and `mean_gpus` are what the Planner provisioned over the run, equal to the report's figures
 * for the point's own prediction (report/fleet.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { predictionReadSchema } from "../../src/output/read.js";
import { recommendationSchema } from "../../src/output/recommendation.js";
import { fleetFactsOf } from "../../src/report/fleet.js";
import { cli } from "../helpers/cli.js";
import { CONVERSATION_600S } from "../helpers/fixtures.js";
import { tempDir } from "../helpers/specs.js";

function csv(text: string): Record<string, string>[] {
  const [head, ...rows] = text.trim().split("\n");
  const keys = head.split(",");
  return rows.map((r) => Object.fromEntries(r.split(",").map((v, i) => [keys[i], v])));
}

describe("fleetsim sweep merge: provisioned GPUs of autoscaled points", () => {
  it("reports each point's peak and mean provisioned GPUs beside its starting GPUs", async () => {
    const dir = tempDir("fleetsim-sweep-gpus-");
    const seed = readFileSync(
      join(import.meta.dirname, "..", "..", "examples", "seed-aggregated.yaml"),
      "utf8",
    );
    writeFileSync(
      join(dir, "prediction.yaml"),
      seed.replace("../../shared/traces/mooncake-fast25/conversation_trace.jsonl", CONVERSATION_600S),
    );
    writeFileSync(
      join(dir, "sweep.yaml"),
      `base: prediction.yaml
set:
  - {traffic.stop.max_virtual_time_seconds: 300}
  - {engine.workers.aggregated.parallelism.replicas: 1}
vary:
  planner.max_num_gpus: [2, 4]
`,
    );
    const plan = join(dir, "plan");
    expect((await cli("sweep", "plan", "-c", join(dir, "sweep.yaml"), "-o", plan)).code).toBe(0);
    const run = await cli("sweep", "run", plan, "--parallel", "2");
    expect(run.code, run.err).toBe(0);
    const out = join(dir, "out");
    const merged = await cli("sweep", "merge", plan, "-o", out);
    expect(merged.code, merged.err).toBe(0);

    const manifest = JSON.parse(readFileSync(join(plan, "manifest.json"), "utf8")) as {
      points: { index: number; hash: string }[];
    };
    const table = csv(readFileSync(join(out, "sweep.csv"), "utf8"));
    const ledger = recommendationSchema.parse(
      JSON.parse(readFileSync(join(out, "recommendation.json"), "utf8")),
    );
    let scaled = 0;
    for (const point of manifest.points) {
      const result = JSON.parse(readFileSync(join(plan, "results", `${point.hash}.json`), "utf8")) as {
        prediction: unknown;
      };
      const facts = fleetFactsOf(predictionReadSchema().parse(result.prediction));
      const row = table[point.index];
      expect(row["used_gpus"]).toBe("1");
      expect(Number(row["peak_gpus"])).toBe(facts.peakGpus);
      expect(Number(row["mean_gpus"])).toBe(facts.meanGpus);
      const candidate = ledger.candidates[point.index];
      expect(candidate.used_gpus).toBe(1);
      expect(candidate.peak_gpus).toBe(facts.peakGpus);
      expect(candidate.mean_gpus).toBe(facts.meanGpus);
      // The mean lies between the fewest (one worker) and the most provisioned.
      expect(facts.meanGpus!).toBeGreaterThanOrEqual(1 - 1e-9);
      expect(facts.meanGpus!).toBeLessThanOrEqual(facts.peakGpus! + 1e-9);
      if (facts.peakGpus! > 1) scaled++;
    }
    // The seed's Planner adds workers to the one it starts with: the merge must not report 1 GPU.
    expect(scaled).toBeGreaterThan(0);
  });
});
