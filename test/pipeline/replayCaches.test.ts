/**
 * A sweep worker's caches (src/pipeline/replayCaches.ts): a hit for the same spec parts (replica
 * counts apart), a miss for different ones, the bound, and no failed build kept.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import type { AggregatedEngineSpec, RunSpec } from "../../src/config/runSpec.js";
import { ReplayCaches, timingKey } from "../../src/pipeline/replayCaches.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/aggregated.yaml", import.meta.url));

function spec(...sets: string[]): RunSpec {
  return loadConfig({ configPath: EXAMPLE, sets, stack: "dynamo" });
}

function engine(s: RunSpec): AggregatedEngineSpec {
  if (s.engine.mode !== "aggregated") throw new Error("the example is aggregated");
  return s.engine;
}

/** The example's engine with its one role changed. */
function withRole(s: RunSpec, role: Partial<AggregatedEngineSpec["aggregated"]>): AggregatedEngineSpec {
  const e = engine(s);
  return { ...e, aggregated: { ...e.aggregated, ...role } };
}

describe("ReplayCaches", () => {
  it("timing models: a hit for the same timing spec and layout, whatever the replica count", async () => {
    const caches = new ReplayCaches();
    const base = spec();
    const first = await caches.roleTimings(base.engine);
    expect(await caches.roleTimings(spec().engine)).toBe(first);
    expect(await caches.roleTimings(withRole(base, { replicas: 7, numGpuBlocks: 10 }))).toBe(first);
  });

  it("timing models: a miss on a different layout, GPU or timing model", async () => {
    const caches = new ReplayCaches();
    const base = spec();
    const first = await caches.roleTimings(base.engine);
    const others = [
      withRole(base, { tensor: 2 }),
      withRole(base, { asyncScheduling: !engine(base).aggregated.asyncScheduling }),
      spec("engine.hardware=h100_sxm").engine,
      spec("engine.workers.aggregated.timing={type: polynomial}").engine,
    ];
    const keys = new Set([timingKey(base.engine), ...others.map(timingKey)]);
    expect(keys.size).toBe(5);
    for (const e of others) expect(await caches.roleTimings(e)).not.toBe(first);
  });

  it("keeps at most its capacity, the least recently used going first", async () => {
    const caches = new ReplayCaches({ workloads: 1, timings: 2 });
    const base = spec();
    const a = await caches.roleTimings(base.engine);
    const b = await caches.roleTimings(withRole(base, { tensor: 2 }));
    await caches.roleTimings(withRole(base, { tensor: 4 })); // evicts a
    expect(await caches.roleTimings(withRole(base, { tensor: 2 }))).toBe(b);
    expect(await caches.roleTimings(base.engine)).not.toBe(a);
    // Workloads: one entry; another load (or block size) replaces it.
    const w = await caches.workload(base);
    expect(await caches.workload(spec())).toBe(w);
    const faster = await caches.workload(spec("traffic.load.speedup=2"));
    expect(faster).not.toBe(w);
    expect(await caches.workload(base)).not.toBe(w);
  });

  it("does not keep a build that failed", async () => {
    const caches = new ReplayCaches();
    const base = spec();
    const timing = engine(base).aggregated.timing;
    if (timing.type !== "default") throw new Error("the example uses the default timing");
    const broken = withRole(base, { timing: { ...timing, perfDatabase: "/nonexistent/perf-data" } });
    const first = caches.roleTimings(broken);
    await expect(first).rejects.toThrow();
    const second = caches.roleTimings(broken);
    expect(second).not.toBe(first);
    await expect(second).rejects.toThrow();
  });
});
