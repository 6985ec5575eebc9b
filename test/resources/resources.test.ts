import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_EXECUTION, type ResourceSettings } from "../../src/config/runSpec.js";
import {
  GB,
  type HostResources,
  MIB,
  PhaseClock,
  probeHost,
  processTreeRss,
  type ResourceHooks,
  ResourceMonitor,
  resolveBudget,
} from "../../src/resources/index.js";
import { cliAsIs } from "../helpers/cli.js";
import { syntheticProject } from "../helpers/specs.js";

const HOST: HostResources = { availableMemoryBytes: 16 * GB, availableMemorySource: "meminfo", cpuCount: 8 };
const DEFAULTS = DEFAULT_EXECUTION.resources;

function settings(over: Partial<ResourceSettings>): ResourceSettings {
  return { ...DEFAULTS, ...over };
}

describe("resource budget arithmetic", () => {
  it("auto with the defaults is max(0, min(0.9·A, A − 1 GB))", () => {
    expect(resolveBudget(DEFAULTS, HOST).memoryBytes).toBe(14.4 * GB);
    // Small host: A − 1 GB is the smaller term.
    const small = { ...HOST, availableMemoryBytes: 5 * GB };
    expect(resolveBudget(DEFAULTS, small).memoryBytes).toBe(4 * GB);
    // Less than the reserve: zero, never negative.
    const tiny = { ...HOST, availableMemoryBytes: 0.5 * GB };
    expect(resolveBudget(DEFAULTS, tiny).memoryBytes).toBe(0);
    expect(resolveBudget(DEFAULTS, HOST).memorySource).toBe("auto");
  });

  it("auto honours reserve_memory_gb, reserve_memory_fraction and available_memory_fraction", () => {
    expect(resolveBudget(settings({ reserveMemoryGb: 4 }), HOST).memoryBytes).toBe(12 * GB);
    expect(resolveBudget(settings({ availableMemoryFraction: 0.5 }), HOST).memoryBytes).toBe(8 * GB);
    // 14.4 GB − 0.25 × 16 GB
    expect(resolveBudget(settings({ reserveMemoryFraction: 0.25 }), HOST).memoryBytes).toBe(10.4 * GB);
    expect(
      resolveBudget(settings({ reserveMemoryGb: 15, reserveMemoryFraction: 0.5 }), HOST).memoryBytes,
    ).toBe(0);
  });

  it("an explicit memory_limit_gb is decimal GB and ignores the reserves", () => {
    const b = resolveBudget(settings({ memoryLimitGb: 2.5, reserveMemoryGb: 100 }), HOST);
    expect(b.memoryBytes).toBe(2_500_000_000);
    expect(b.memorySource).toBe("explicit");
  });

  it("the reserve the host must keep is reserve_memory_gb + reserve_memory_fraction·A", () => {
    expect(resolveBudget(DEFAULTS, HOST).reserveBytes).toBe(1 * GB);
    expect(
      resolveBudget(settings({ reserveMemoryGb: 2, reserveMemoryFraction: 0.25 }), HOST).reserveBytes,
    ).toBe(6 * GB);
  });

  it("cpu_limit: explicit, or auto = host CPUs minus one (at least one)", () => {
    expect(resolveBudget(settings({ cpuLimit: 3 }), HOST).cpuLimit).toBe(3);
    expect(resolveBudget(DEFAULTS, HOST).cpuLimit).toBe(7);
    expect(resolveBudget(DEFAULTS, { ...HOST, cpuCount: 1 }).cpuLimit).toBe(1);
  });
});

describe("resource monitor", () => {
  it("measures this process (and its owned descendants) with a positive RSS", () => {
    const tree = processTreeRss();
    expect(tree.totalBytes).toBeGreaterThanOrEqual(tree.selfBytes);
    expect(tree.selfBytes).toBeGreaterThan(0);
  });

  it("reports the first sample above the budget once, and the peak", () => {
    const values = [10, 20, 50, 30];
    let i = 0;
    let calls = 0;
    const m = new ResourceMonitor({
      budgetBytes: 40,
      sample: () => values[i++ % values.length],
      onExceeded: () => {
        calls += 1;
      },
    });
    for (let k = 0; k < 4; k++) m.sampleNow();
    const r = m.stop();
    expect(m.exceeded).toBe(true);
    expect(calls).toBe(1);
    expect(r.peakObservedRssBytes).toBe(50);
    expect(r.exceededAtBytes).toBe(50);
    expect(r.exceededReason).toBe("memory_budget");
    expect(r.samples).toBe(4);
  });

  it("stops when the host's available memory falls below the reserve, and records the lowest reading", () => {
    const available = [5000, 3000, 900, 4000];
    let i = 0;
    let calls = 0;
    const m = new ResourceMonitor({
      budgetBytes: 1e12,
      sample: () => 10,
      reserveBytes: 1000,
      availableMemory: () => available[i++],
      onExceeded: () => {
        calls += 1;
      },
    });
    m.sampleNow();
    m.sampleNow();
    expect(m.exceeded).toBe(false);
    m.sampleNow();
    m.sampleNow();
    const r = m.stop();
    expect(m.exceeded).toBe(true);
    expect(calls).toBe(1);
    expect(r.exceededReason).toBe("host_reserve");
    expect(r.minAvailableMemoryBytes).toBe(900);
    expect(r.reserveBytes).toBe(1000);
    // An unreadable host (null) is never a reason to stop.
    const blind = new ResourceMonitor({
      budgetBytes: 1e12,
      sample: () => 10,
      reserveBytes: 1000,
      availableMemory: () => null,
    });
    blind.sampleNow();
    expect(blind.exceeded).toBe(false);
    expect(blind.stop().minAvailableMemoryBytes).toBeNull();
  });
});

describe("phase clock (initialization / shutdown timeouts)", () => {
  /** A clock whose time is whatever the test last set, in ms. */
  function manual(startMs: number) {
    const t = { now: startMs };
    const limits = { initializationTimeoutSeconds: 60, shutdownTimeoutSeconds: 5 };
    return { t, clock: new PhaseClock(limits, startMs, () => t.now) };
  }

  it("start-up is from the command's start to the replay's start; exactly at the limit is not an overrun", () => {
    const a = manual(1000);
    a.t.now = 61_000;
    expect(a.clock.replayStarted()).toBe(false);
    expect(a.clock.times().initializationSeconds).toBe(60);
    const b = manual(1000);
    b.t.now = 61_001;
    expect(b.clock.replayStarted()).toBe(true);
    expect(b.clock.initializationOverran()).toBe(true);
  });

  it("shutdown is from the replay's end to the outputs being ready; unreached phases are null", () => {
    const c = manual(0);
    expect(c.clock.times()).toEqual({
      initializationSeconds: null,
      initializationTimeoutSeconds: 60,
      shutdownSeconds: null,
      shutdownTimeoutSeconds: 5,
    });
    c.t.now = 10;
    c.clock.replayStarted();
    c.t.now = 100_000;
    c.clock.replayEnded();
    c.t.now = 104_000;
    expect(c.clock.shutdownFinished()).toBe(false);
    expect(c.clock.times().shutdownSeconds).toBe(4);
    const d = manual(0);
    d.clock.replayStarted();
    d.t.now = 100_000;
    d.clock.replayEnded();
    d.t.now = 105_500;
    expect(d.clock.shutdownFinished()).toBe(true);
  });
});

const cli = (argv: string[], resources?: ResourceHooks) => cliAsIs(argv, { resources });

describe("fleetsim predict: resource supervision", () => {
  it("a tiny memory_limit_gb is refused by the preflight: exit 3, resource-plan.json, no prediction", async () => {
    const p = syntheticProject(20, "execution:\n  resources: {memory_limit_gb: 0.001}\n");
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out]);
    expect(r.code).toBe(3);
    expect(r.err).toContain("resource preflight refused the run");
    expect(existsSync(join(p.out, "prediction.json"))).toBe(false);
    expect(existsSync(join(p.out, "resource-runtime.json"))).toBe(false);
    const plan = JSON.parse(readFileSync(join(p.out, "resource-plan.json"), "utf8"));
    expect(plan.decision).toBe("refused");
    expect(plan.budget_bytes).toBe(1_000_000);
    expect(plan.estimated_bytes).toBeGreaterThan(plan.budget_bytes);
  });

  it("a normal run writes resource-runtime.json: positive peak RSS, termination completed", async () => {
    const p = syntheticProject(50, "execution:\n  resources: {cpu_limit: 2}\n");
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out, "--format", "json"]);
    expect(r.code).toBe(0);
    expect(existsSync(join(p.out, "prediction.json"))).toBe(true);
    expect(existsSync(join(p.out, "resource-plan.json"))).toBe(false);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.termination).toBe("completed");
    expect(rt.peak_observed_rss_bytes).toBeGreaterThan(0);
    expect(rt.peak_observed_rss_bytes).toBeLessThanOrEqual(rt.budget_bytes);
    expect(rt.cpu_limit).toBe(2);
    expect(rt.samples).toBeGreaterThanOrEqual(2);
    expect(rt.exceeded_at_rss_bytes).toBeNull();
    expect(rt.exceeded_reason).toBeNull();
    expect(rt.reserve_bytes).toBe(1e9);
  });

  it("RSS growing past the runtime budget stops the run as resource_limited (exit 3, no prediction)", async () => {
    const p = syntheticProject(2_000_000);
    // The monitor's limit sits just above the current tree RSS; the per-request capture of two
    // million requests grows far beyond it long before the replay ends.
    const budget = processTreeRss().totalBytes + 64 * MIB;
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out, "--capture-per-request"], {
      runtimeBudgetBytes: budget,
      // The preflight estimates what two million captured requests take (GBs): a host with room for
      // them, so that the run gets past the preflight on any machine and the monitor stops it.
      host: { ...probeHost(), availableMemoryBytes: 1e13 },
    });
    expect(r.err).toContain("resource_limited");
    expect(r.code).toBe(3);
    expect(existsSync(join(p.out, "prediction.json"))).toBe(false);
    expect(existsSync(join(p.out, "requests.jsonl"))).toBe(false);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.termination).toBe("resource_limited");
    expect(rt.budget_bytes).toBe(budget);
    expect(rt.peak_observed_rss_bytes).toBeGreaterThanOrEqual(budget);
  });

  it("start-up over initialization_timeout_seconds stops the run: exit 124, no prediction", async () => {
    const p = syntheticProject(50, "execution:\n  resources: {initialization_timeout_seconds: 0.000001}\n");
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out]);
    expect(r.code).toBe(124);
    expect(r.err).toContain("execution.resources.initialization_timeout_seconds = 0.000001");
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(p.out, "prediction.json"))).toBe(false);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.termination).toBe("initialization_timeout");
    expect(rt.initialization_seconds).toBeGreaterThan(0.000001);
    expect(rt.shutdown_seconds).toBeNull();
  });

  it("the start-up watchdog stops a start-up that never ends: exit 124 without waiting for it", async () => {
    const p = syntheticProject(50, "execution:\n  resources: {initialization_timeout_seconds: 0.3}\n");
    const started = performance.now();
    // Start-up stalls forever: only a watchdog (not a check at the replay's start) can end the run.
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out], {
      startupStall: () => new Promise<void>(() => {}),
    });
    const tookS = (performance.now() - started) / 1000;
    expect(r.code).toBe(124);
    expect(tookS).toBeLessThan(10);
    expect(r.err).toContain("start-up took");
    expect(r.err).toContain("execution.resources.initialization_timeout_seconds = 0.3");
    expect(existsSync(join(p.out, "prediction.json"))).toBe(false);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.termination).toBe("initialization_timeout");
    expect(rt.initialization_seconds).toBeGreaterThanOrEqual(0.3);
    expect(rt.shutdown_seconds).toBeNull();
  });

  it("a start-up that ends before the watchdog fires is unaffected by it", async () => {
    const p = syntheticProject(50, "execution:\n  resources: {initialization_timeout_seconds: 30}\n");
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out], {
      startupStall: () => new Promise<void>((resolve) => setTimeout(resolve, 100)),
    });
    expect(r.code).toBe(0);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.termination).toBe("completed");
    expect(rt.initialization_seconds).toBeGreaterThanOrEqual(0.1);
    // In-process (a test, an embedding program): the host program's CPU affinity is left alone.
    expect(rt.cpu_pinning).toBe("in_process");
    expect(rt.cpu_affinity).toBeNull();
  });

  it("shutdown over shutdown_timeout_seconds stops the run: exit 124, no prediction", async () => {
    const p = syntheticProject(50, "execution:\n  resources: {shutdown_timeout_seconds: 0.000001}\n");
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out, "--capture-per-request"]);
    expect(r.code).toBe(124);
    expect(r.err).toContain("execution.resources.shutdown_timeout_seconds = 0.000001");
    expect(existsSync(join(p.out, "prediction.json"))).toBe(false);
    expect(existsSync(join(p.out, "requests.jsonl"))).toBe(false);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.termination).toBe("shutdown_timeout");
    expect(rt.initialization_seconds).toBeGreaterThan(0);
    expect(rt.shutdown_seconds).toBeGreaterThan(0.000001);
  });

  it("a completed run records both phases under their default limits", async () => {
    const p = syntheticProject(50);
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out]);
    expect(r.code).toBe(0);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.initialization_timeout_seconds).toBe(60);
    expect(rt.shutdown_timeout_seconds).toBe(5);
    expect(rt.initialization_seconds).toBeGreaterThan(0);
    expect(rt.initialization_seconds).toBeLessThan(60);
    expect(rt.shutdown_seconds).toBeGreaterThanOrEqual(0);
    expect(rt.shutdown_seconds).toBeLessThan(5);
  });

  it("the host's available memory below the reserve stops the run as resource_limited (exit 3)", async () => {
    const p = syntheticProject(200_000);
    // 0.5 GB available against the default 1 GB reserve.
    const r = await cli(["predict", "-c", p.config, "--output-dir", p.out], {
      availableMemory: () => 0.5 * GB,
    });
    expect(r.code).toBe(3);
    expect(r.err).toContain("below the reserve of 1.000 GB");
    expect(existsSync(join(p.out, "prediction.json"))).toBe(false);
    const rt = JSON.parse(readFileSync(join(p.out, "resource-runtime.json"), "utf8"));
    expect(rt.termination).toBe("resource_limited");
    expect(rt.exceeded_reason).toBe("host_reserve");
    expect(rt.min_available_memory_bytes).toBe(0.5 * GB);
    expect(rt.reserve_bytes).toBe(1 * GB);
  });
});
