/**
 * The library API takes a deployment's PlannerConfig as seed 000 tells users to copy it ("Replay in
 * Advisory Mode": set `advisory: false` and `batch_scheduling.enabled: false`), with the
 * `SchedulingConfig` block and `live_dashboard_port` as the reference's PlannerConfig accepts them.
 */
import { describe, expect, it } from "vitest";
import { type PlannerConfig, runTraceReplay } from "../../src/index.js";
import { firstIssueAt, rejectionOf } from "../helpers/configHelpers.js";
import { writeTrace } from "../helpers/specs.js";

const ROWS = Array.from({ length: 40 }, (_, i) => ({
  timestamp: i * 500,
  input_length: 300 + (i % 5) * 100,
  output_length: 4 + (i % 3),
  hash_ids: [i + 1],
}));

const BASE = { extraEngineArgs: { max_num_seqs: 8 }, modelName: "Qwen/Qwen3-8B", numWorkers: 2 } as const;

async function run(plannerConfig: PlannerConfig) {
  return runTraceReplay(writeTrace(ROWS), { ...BASE, plannerConfig });
}

const rejection = (plannerConfig: PlannerConfig) => rejectionOf(() => run(plannerConfig));
const issueAt = firstIssueAt;

/** A deployment's PlannerConfig, copied and edited as seed 000 says. */
const DEPLOYMENT: PlannerConfig = {
  mode: "agg",
  optimization_target: "throughput",
  advisory: false,
  environment: "kubernetes",
  backend: "vllm",
  batch_scheduling: { enabled: false, redis_url: "redis://redis:6379/0", pool_id: "pool-a" },
  scheduling: { scale_interval_seconds: 5, tick_max_duration_seconds: 30, external_plugins: [] },
  live_dashboard_port: 8080,
  report_interval_hours: null,
};

describe("a deployment's PlannerConfig replays as copied", () => {
  it("batch_scheduling {enabled: false}, scheduling and live_dashboard_port 8080 are accepted", async () => {
    const report = await run(DEPLOYMENT);
    const planner = report.planner!;
    expect(planner.metadata["scale_interval_seconds"]).toBe(5);
    expect(planner.total_ticks).toBeGreaterThan(0);
    // No dashboard and no HTML report: nothing to point at.
    expect(planner.html_report_path).toBeNull();
  });

  it("an explicit scheduling.scale_interval_seconds sets the tick", async () => {
    const report = await run({ ...DEPLOYMENT, scheduling: { scale_interval_seconds: 2.5 } });
    const ticks = report.planner!.ticks;
    expect(report.planner!.metadata["scale_interval_seconds"]).toBe(2.5);
    expect(ticks.slice(0, 3).map((t) => t.at_ms)).toEqual([2500, 5000, 7500]);
  });

  it("batch scheduling left enabled is accepted only in advisory mode", async () => {
    const enabled = { ...DEPLOYMENT, batch_scheduling: { enabled: true } };
    const err = await rejection(enabled);
    expect(issueAt(err, "plannerConfig.batch_scheduling.enabled").message).toContain(
      "set batch_scheduling.enabled: false",
    );
    const advisory = await run({ ...enabled, advisory: true });
    expect(advisory.planner!.metadata["advisory"]).toBe(true);
  });

  it("scheduling and batch_scheduling mistakes name the field", async () => {
    const err = await rejection({
      ...DEPLOYMENT,
      batch_scheduling: { enabled: "no" } as unknown as PlannerConfig["batch_scheduling"],
      scheduling: {
        scale_interval_seconds: 0,
        external_plugins: [{ plugin_id: "x" }],
        scale_every: 3,
      } as unknown as PlannerConfig["scheduling"],
      live_dashboard_port: 70_000,
    });
    expect(issueAt(err, "plannerConfig.batch_scheduling.enabled").message).toContain("valid boolean");
    expect(issueAt(err, "plannerConfig.scheduling.scale_interval_seconds").message).toContain("positive");
    expect(issueAt(err, "plannerConfig.scheduling.external_plugins").message).toContain("not simulated");
    expect(issueAt(err, "plannerConfig.scheduling.scale_every").message).toBe(
      "Extra inputs are not permitted",
    );
    expect(issueAt(err, "plannerConfig.live_dashboard_port").message).toContain("0–65535");
  });

  it("a scale interval must divide every enabled adjustment interval", async () => {
    const err = await rejection({ ...DEPLOYMENT, scheduling: { scale_interval_seconds: 3 } });
    expect(issueAt(err, "plannerConfig.scheduling.scale_interval_seconds").message).toBe(
      "(3) must divide every enabled adjustment interval; load_adjustment_interval_seconds is 5",
    );
  });
});
