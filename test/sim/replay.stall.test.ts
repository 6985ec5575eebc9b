import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Terminal } from "../../src/metrics/collector.js";
import { loadWorkload } from "../../src/pipeline/index.js";
import { createRoleTimings } from "../../src/pipeline/timings.js";
import { Replay, STALL_TICKS } from "../../src/sim/replay.js";
import type { ScalingAction, ScalingPolicy, TickSnapshot } from "../../src/sim/scaling.js";
import { cli } from "../helpers/cli.js";
import { configFile, engineYaml, fixedTiming, syntheticTraffic } from "../helpers/configYaml.js";
import { traceSpec, writeTrace } from "../helpers/specs.js";

/** Scales the pool to 0 at the first tick and back to 1 at tick `backAt` (never, if null). */
class ZeroThenBack implements ScalingPolicy {
  ticks = 0;
  constructor(private readonly backAt: number | null) {}
  initialTickMs(): number {
    return 10;
  }
  onTick(s: TickSnapshot): ScalingAction {
    this.ticks++;
    const target = this.ticks === 1 ? 0 : this.backAt !== null && this.ticks === this.backAt ? 1 : null;
    return { targetPrefill: null, targetDecode: target, nextTickMs: s.nowMs + 10 };
  }
}

async function replayWith(policy: ZeroThenBack) {
  const rows = [
    { timestamp: 0, input_length: 8, output_length: 2, hash_ids: [1, 2] },
    { timestamp: 500, input_length: 8, output_length: 2, hash_ids: [3, 4] },
  ];
  const spec = traceSpec(writeTrace(rows), { role: { replicas: 1 } });
  const table = await loadWorkload(spec);
  return new Replay(spec, table, await createRoleTimings(spec.engine), {
    capturePerRequest: false,
    scaling: policy,
  }).runSync();
}

describe("a pool scaled to zero while requests wait", () => {
  it("stops after STALL_TICKS ticks with the waiting request unfinished", async () => {
    const policy = new ZeroThenBack(null);
    const result = await replayWith(policy);
    expect(result.stalled).toMatchObject({ pool: "agg", waiting: 1, sinceMs: 500 });
    expect(policy.ticks).toBeLessThanOrEqual(STALL_TICKS + 60);
    expect(result.requests.columns().status[0]).toBe(Terminal.Completed);
    expect(result.requests.columns().status[1]).toBe(Terminal.None);
  });

  it("a policy that scales back up in time is not stopped", async () => {
    const result = await replayWith(new ZeroThenBack(200));
    expect(result.stalled).toBeNull();
    expect([...result.requests.columns().status]).toEqual([Terminal.Completed, Terminal.Completed]);
  });

  it("a Planner budget below min_workers: the run ends with a warning naming the cause", async () => {
    const { dir, config } = configFile(
      `${syntheticTraffic("{type: concurrency, concurrency: 4}", "{requests: 1000}")}${engineYaml({
        replicas: 4,
        blocks: 4096,
        timing: fixedTiming(1, 1),
      })}planner: {policy: enabled, target: load, enable_throughput_scaling: false, load_adjustment_interval_seconds: 1, max_num_gpus: 2, min_workers: 5}
`,
      { name: "c.yaml" },
    );
    const t0 = performance.now();
    const r = await cli("predict", "-c", config, "--output-dir", join(dir, "out"), "--progress", "none");
    expect(performance.now() - t0).toBeLessThan(20_000);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/the run stopped at .* scaling left the agg pool without any worker/);
    expect(r.err).toContain("planner.max_num_gpus (2) cannot hold the minimum of 5 workers × 1 GPUs");
    expect(r.out).toMatch(/Not Completed: 4 of \d+ requests/);
  });
});
