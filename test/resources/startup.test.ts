/**
 * Start-up memory is priced before anything is allocated (issue 13 §6): 100,000 replicas under a
 * 2 GB budget used to reach 6 GB before the monitor stopped them; the preflight now refuses the
 * plan (exit 3, resource-plan.json) in well under a second of work.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliPredict, setFlags } from "../helpers/cli.js";
import { syntheticProject } from "../helpers/specs.js";

describe("start-up memory", () => {
  it("100,000 replicas under memory_limit_gb 2: refused before start-up, the workers priced", async () => {
    const p = syntheticProject(100, "execution: {resources: {memory_limit_gb: 2}}\n");
    const t0 = performance.now();
    const r = await cliPredict(
      p.config,
      p.out,
      ...setFlags("engine.workers.aggregated.parallelism.replicas=100000"),
    );
    expect(r.code).toBe(3);
    expect(r.err).toContain("resource preflight refused the run");
    expect(performance.now() - t0).toBeLessThan(5_000);
    const plan = JSON.parse(readFileSync(join(p.out, "resource-plan.json"), "utf8"));
    expect(plan.decision).toBe("refused");
    expect(plan.estimated_bytes).toBeGreaterThan(plan.budget_bytes);
    expect(plan.budget_bytes).toBe(2e9);
    // Nothing else was written: no prediction of a run that never started.
    expect(() => readFileSync(join(p.out, "prediction.json"))).toThrow();
  });
});
