import { describe, expect, it } from "vitest";
import { addedWorkers, predictPlanner, transitions } from "../helpers/plannerRun.js";

const predict = (config: string, ...sets: string[]) => predictPlanner(config, sets);

describe("seed walkthroughs with the Planner, conversation trace", () => {
  it("aggregated baseline: SLA Planner bootstrapped, ticks recorded, report under 5 MB", async () => {
    const { doc, bytes } = await predict("examples/seed-aggregated.yaml");
    const p = doc.planner!;
    expect(p.metadata.mode).toBe("agg");
    expect(p.metadata.advisory).toBe(false);
    expect(p.metadata.bootstrap.status).toBe("installed");
    expect(p.metadata.bootstrap.fpm_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(p.html_report_path).toBeNull();
    // One tick every 10 s (gcd of 300 and 10) from 10 s until the traffic is served.
    expect(p.total_ticks).toBe(p.ticks.length);
    expect(p.ticks[0].at_ms).toBe(10_000);
    expect(p.ticks.every((t, i) => t.ordinal === i && t.at_ms === 10_000 * (i + 1))).toBe(true);
    // As the reference's Planner on this config (docs/conformance.md, Known differences 4): no SLA
    // estimate before the fifth tick (the mixed-pass regression needs load_min_observations live
    // passes), then ITL estimated above the 50 ms SLA for two workers, held at the 2-GPU budget.
    const diagnostics = p.ticks.map(
      (t) => (t as unknown as { effects: { diagnostics: Record<string, unknown> } }).effects.diagnostics,
    );
    for (const d of diagnostics.slice(0, 4)) {
      expect(d["estimated_itl_ms"]).toBeNull();
      expect(d["load_decision_reason"]).toBe("no_change");
    }
    expect(diagnostics[4]["estimated_itl_ms"]).toBeGreaterThan(50);
    expect(
      diagnostics.filter((d) => d["load_decision_reason"] === "gpu_budget_guard_hold").length,
    ).toBeGreaterThan(diagnostics.length / 2);
    expect(p.scaling_events).toEqual([]);
    expect(doc.summary.num_requests).toBe(12031);
    expect(bytes).toBeLessThan(5 * 1024 * 1024);
  });

  it("disaggregated comparison: both roles scale within their minimums and GPU-hours add up", async () => {
    const { doc } = await predict("examples/seed-disaggregated.yaml");
    const p = doc.planner!;
    expect(p.metadata.mode).toBe("disagg");
    for (const e of p.scaling_events) {
      expect(["prefill", "decode"]).toContain(e.component);
      expect(e.to_count).toBeGreaterThanOrEqual(1);
    }
    const s = doc.summary;
    expect(s.gpu_hours).toBeCloseTo(
      (s.prefill_worker_seconds * s.prefill_gpus_per_worker +
        s.decode_worker_seconds * s.decode_gpus_per_worker) /
        3600,
      9,
    );
    expect(s.num_requests).toBe(12031);
  });

  it("disaggregated with max_num_gpus 4 (issue 12 §1): drained prefill workers leave, GPU-hours are the provisioned time", async () => {
    // Before the fix a prefill worker whose last KV copy was released by a transfer completion
    // stayed draining for the rest of the run: gpu_hours 25.24, prefill_worker_seconds 87,308,
    // 40 workers draining at the last tick.
    const { doc } = await predict("examples/seed-disaggregated.yaml", "planner.max_num_gpus=4");
    const p = doc.planner!;
    const s = doc.summary;
    const peak = Math.max(...p.scaling_events.map((e) => e.to_count));
    expect(peak).toBeLessThanOrEqual(3);
    // Never more prefill workers on average than the largest size the Planner asked for.
    expect(s.prefill_worker_seconds / (s.duration_ms / 1000)).toBeLessThanOrEqual(peak);
    expect(s.gpu_hours).toBeLessThan(4 * (s.duration_ms / 3_600_000));
    // 2.575 before the Planner's regressions became non-negative least squares, 2.608 before they
    // became the reference's (its features, stores and retention) and the ticks saw each pass at
    // its end (2026-12-06); 2.382 before a store kept its last plane when a refit is not a model
    // and a tick after a merged decode run saw that run's last pass (2026-12-07); 2.367 before a
    // disaggregated run routed a timestamp's arrivals after its scaling tick (2026-12-07,
    // docs/conformance.md Known differences 17); 2.356 before the Planner's KV hit rate became
    // the router's view at admission (0 under round robin, docs/planner.md "What runs", 2026-12-07).
    expect(s.gpu_hours).toBeCloseTo(2.396, 2);
    const ticks = p.ticks as unknown as { topology: Record<string, { draining_count: number }> }[];
    expect(ticks.at(-1)!.topology.prefill.draining_count).toBe(0);
    expect(Math.max(...ticks.map((t) => t.topology.prefill.draining_count))).toBeLessThanOrEqual(2);
    // The load target takes the same lifecycle path.
    const load = (
      await predict("examples/seed-disaggregated.yaml", "planner.max_num_gpus=4", "planner.target=load")
    ).doc;
    const loadPeak = Math.max(1, ...load.planner!.scaling_events.map((e) => e.to_count));
    const ls = load.summary;
    expect(ls.prefill_worker_seconds / (ls.duration_ms / 1000)).toBeLessThanOrEqual(loadPeak);
    const loadTicks = load.planner!.ticks as unknown as {
      topology: Record<string, { draining_count: number }>;
    }[];
    expect(loadTicks.at(-1)!.topology.prefill.draining_count).toBe(0);
  });

  it("startup sweep 0…300 s: added workers start, become ready exactly startup_seconds later, a slower start costs latency", async () => {
    // One worker on a 4-GPU budget, as the conformance harness's startup cases: the Planner adds
    // workers (the seed's two on a 2-GPU budget hold all along on this trace, as the reference's do).
    // Over the hour it also steps back down on quiet ticks and up again (the reference's does the
    // same on its 600 s cases, docs/conformance.md Known differences 4), so how many it adds
    // depends on the delay; with the longest ones the deployment falls behind the trace.
    const ttft: number[] = [];
    for (const startup of [0, 60, 120, 180, 240, 300]) {
      const { doc } = await predictPlanner(
        "examples/seed-aggregated.yaml",
        [
          `engine.workers.aggregated.startup_seconds=${startup}`,
          "engine.workers.aggregated.parallelism.replicas=1",
          "planner.max_num_gpus=4",
        ],
        /^(fleetsim: warning: the run is saturated: [^\n]*\n)?$/,
      );
      const p = doc.planner!;
      const tr = transitions(p);
      const starting = tr.filter((t) => t.transition === "worker_starting");
      const n = addedWorkers(p);
      expect(n).toBeGreaterThan(0);
      ttft.push(doc.summary.mean_ttft_ms);
      if (startup === 0) {
        expect(starting).toHaveLength(0);
        expect(tr.filter((t) => t.transition === "worker_ready")).toHaveLength(n);
      } else {
        expect(starting).toHaveLength(n);
        for (const s of starting) {
          const ready = tr.find((t) => t.worker_id === s.worker_id && t.transition === "worker_ready");
          const cancelled = tr.find(
            (t) =>
              t.worker_id === s.worker_id &&
              t.transition === "worker_removed" &&
              t.at_ms < s.at_ms + startup * 1000,
          );
          // Ready exactly startup_seconds later, unless cancelled first or the run ends before.
          const due = s.at_ms + startup * 1000;
          if (cancelled === undefined && due <= doc.summary.duration_ms) expect(ready?.at_ms).toBe(due);
          if (ready !== undefined) expect(ready.at_ms).toBe(due);
        }
      }
    }
    // A slower startup leaves the deployment short for longer.
    expect(ttft[5]).toBeGreaterThan(ttft[0]);
    expect(ttft[3]).toBeGreaterThan(ttft[0]);
  }, 120_000);
});
