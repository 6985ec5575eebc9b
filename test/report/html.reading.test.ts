/**
 * What the HTML report gives a reader (docs/report.md): latency over time in buckets sized to the
 * run (`timeseries.latency`), a flag when provisioned GPUs exceed the budget, retune scores with
 * the objective's name and units, and host-speed figures labelled as host time.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { nearestRank } from "../../src/metrics/distribution.js";
import { latencyIntervalMs } from "../../src/metrics/timeline.js";
import { renderHtmlReport } from "../../src/report/html/index.js";
import type { Prediction } from "../../src/report/prediction.js";
import { fixturePrediction, payloadOf } from "../browser/reportFixture.js";
import { cliPredict } from "../helpers/cli.js";
import { configFile, engineYaml, fixedTiming, syntheticTraffic } from "../helpers/configYaml.js";
import { tempDir } from "../helpers/specs.js";

function chart(html: string, id: string) {
  const c = payloadOf(html).charts.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no chart ${id}`);
  return c;
}

function noteOf(html: string, id: string): string {
  const at = html.indexOf(`id="chart-${id}"`);
  const start = html.lastIndexOf("<figcaption>", at);
  return /<p>([^<]*)<\/p>/.exec(html.slice(start, at))?.[1] ?? "";
}

/** One hour of constant-rate synthetic traffic that a fixed-timing worker serves with ease. */
async function oneHourRun(rate: number) {
  const dir = tempDir("fleetsim-latency-");
  const { config } = configFile(
    syntheticTraffic(
      `{type: constant_rate, requests_per_second: ${rate}}`,
      `{requests: ${rate * 3600}}`,
      [64, 8],
    ) + engineYaml({ replicas: 1, blocks: 4096, timing: fixedTiming(20, 5) }),
    { dir },
  );
  const out = join(dir, "out");
  const r = await cliPredict(config, out, "--capture-per-request", "--html");
  expect(r.code, r.err).toBe(0);
  const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
  return { doc, html: readFileSync(join(out, "report.html"), "utf8") };
}

describe("latency over time in buckets sized to the run", () => {
  it("latencyIntervalMs: about 50 samples a bucket, 20 to 120 buckets, a nice multiple of the interval", () => {
    // one hour of 5 s buckets with 12,000 samples: 120 buckets wanted, 30 s → 50 s (72 buckets)
    expect(latencyIntervalMs(5000, 720, 12_000)).toBe(50_000);
    // 2,000 samples → 40 buckets: 90 s → 100 s
    expect(latencyIntervalMs(5000, 720, 2000)).toBe(100_000);
    // a handful of samples still gets 20 buckets over the run: 36 min / 20 → 200 s
    expect(latencyIntervalMs(5000, 432, 3)).toBe(200_000);
    // a short run: 100 ms buckets ×10 over 1 s with 100 samples → 20 buckets of 100 ms (the fine step)
    expect(latencyIntervalMs(100, 10, 100)).toBe(100);
    for (const [interval, count, samples] of [
      [200, 537, 900],
      [5000, 1300, 40_000],
      [2000, 77, 5],
    ]) {
      const step = latencyIntervalMs(interval, count, samples);
      expect(step % interval).toBe(0);
      expect(Math.ceil((count * interval) / step)).toBeLessThanOrEqual(120);
    }
  });

  it("an hour is drawn in 50 s buckets (72 points), not 720 of 5 s; percentiles are exact per bucket", async () => {
    const { doc, html } = await oneHourRun(4);
    const ts = doc.timeseries;
    expect(ts.interval_ms).toBe(5000);
    expect(ts.t_ms.length).toBeGreaterThanOrEqual(720);
    const lat = ts.latency;
    // 14,400 TTFT samples → 120 buckets wanted → 50 s
    expect(lat.interval_ms).toBe(50_000);
    expect(lat.t_ms.length).toBe(Math.ceil((ts.t_ms.length * 5000) / 50_000));
    expect(lat.ttft_samples.reduce((a: number, b: number) => a + b, 0)).toBe(doc.summary.num_ttft_samples);
    // Exact: bucket 10's p90 is the nearest-rank p90 of the TTFTs whose first token fell in it.
    const k = 10;
    const ttfts = (doc.per_request as { first_token_ms: number; ttft_ms: number }[])
      .filter((r) => Math.floor(r.first_token_ms / 50_000) === k)
      .map((r) => r.ttft_ms)
      .sort((a, b) => a - b);
    expect(lat.ttft_samples[k]).toBe(ttfts.length);
    expect(lat.ttft_ms.p90[k]).toBeCloseTo(ttfts[nearestRank(ttfts.length, 90)], 3);
    // The fine buckets are unchanged.
    expect(ts.ttft_ms.p50.length).toBe(ts.t_ms.length);
    // The report draws the run-sized buckets.
    for (const id of ["ttft", "itl"]) {
      const series = chart(html, id).option.series.filter((s) => ["p50", "p90", "p99"].includes(s.name));
      for (const s of series) expect(s.data.length).toBe(lat.t_ms.length);
    }
    expect(noteOf(html, "ttft")).toContain("(50 s buckets, median 200 requests each)");
  });

  it("a prediction.json without timeseries.latency falls back to the fine buckets", () => {
    const html = renderHtmlReport(fixturePrediction({ planner: false }));
    expect(chart(html, "ttft").option.series[0].data.length).toBe(60);
    expect(noteOf(html, "ttft")).toContain("(1 s buckets)");
  });
});

/** The fixture with a `run` block (budget `budget`, 1 prefill + 1 decode GPU at the start) and lifecycle records. */
function withBudget(budget: number, lifecycle: unknown[]): Prediction {
  const doc = fixturePrediction() as unknown as Record<string, Record<string, unknown>>;
  doc.run = {
    mode: "disaggregated",
    topology: {
      prefill: { replicas: 1, gpus_per_worker: 1 },
      decode: { replicas: 1, gpus_per_worker: 1 },
    },
    starting_gpus: 2,
    planner: { target: "sla", max_num_gpus: budget, advisory: false, retune: null },
  };
  doc.planner.lifecycle_operations = lifecycle;
  return doc as unknown as Prediction;
}

const transition = (at_ms: number, pool: string, cause: string, worker_id: number, kind: string) => ({
  at_ms,
  pool,
  cause,
  transitions: [{ worker_id, transition: kind, at_ms }],
});

describe("provisioned GPUs against the budget", () => {
  // Decode worker 1 joins at 20 s; prefill worker 0 drains at 30 s but is removed only at 50 s.
  const lifecycle = [
    transition(20_000, "decode", "scale_up", 1, "worker_ready"),
    transition(30_000, "prefill", "scale_down", 0, "worker_draining"),
    transition(50_000, "prefill", "drain_complete", 0, "worker_removed"),
  ];

  it("the fixture's backlog grows by about one request a second: a saturation warning", () => {
    const html = renderHtmlReport(withBudget(3, lifecycle));
    expect(html).toMatch(
      /<p class="notice alert" role="alert">The run is saturated: the queue was still growing at the last arrival \(\+\d+ requests over the last 15 s of arrivals/,
    );
  });

  it("above the budget: a warning above the charts, the KPI flagged, the chart shaded", () => {
    const html = renderHtmlReport(withBudget(2, lifecycle));
    expect(html).toContain(
      '<p class="notice alert" role="alert">Provisioned GPUs exceed the Planner&#39;s budget of 2 GPUs ' +
        "(max_num_gpus): from 20 s of simulated time, for 30 s in all, peak 3 GPUs.",
    );
    expect(html).toMatch(
      /<div class="kpi alert"><div class="kpi-label">Provisioned GPUs<\/div><div class="kpi-value">peak 3<\/div>/,
    );
    const gpus = chart(html, "gpus");
    expect(gpus.title).toBe("Provisioned GPUs — above the budget");
    const provisioned = gpus.option.series.find((s) => s.name === "provisioned GPUs") as unknown as {
      data: [number, number][];
      markArea: { data: [{ xAxis: number }, { xAxis: number }][] };
    };
    expect(provisioned.data).toEqual([
      [0, 2],
      [20, 3],
      [50, 2],
      [60, 2],
    ]);
    expect(provisioned.markArea.data).toEqual([[{ xAxis: 20 }, { xAxis: 50 }]]);
    expect(gpus.option.series.map((s) => s.name)).toContain("budget 2 GPUs");
  });

  it("within the budget: no warning, no shading", () => {
    const html = renderHtmlReport(withBudget(3, lifecycle));
    expect(html).not.toContain("Provisioned GPUs exceed");
    expect(html).not.toContain('class="kpi alert"');
    expect(chart(html, "gpus").title).toBe("Provisioned GPUs");
    expect(JSON.stringify(chart(html, "gpus").option)).not.toContain("markArea");
  });
});

describe("retune scores and host-speed figures", () => {
  function retuneDoc(objective: string | null): Prediction {
    const doc = withBudget(4, []) as unknown as Record<string, Record<string, unknown>>;
    (doc.run.planner as Record<string, unknown>).retune =
      objective === null ? null : { objective, interval_seconds: 600, max_parallel: 2 };
    doc.planner.retune_events = [
      {
        outcome: "applied",
        reason: null,
        window_index: 0,
        window_start_s: 0,
        window_end_s: 600,
        decided_at_s: 665,
        num_requests: 10,
        num_candidates: 3,
        chosen: { router: { router_temperature: 0 } },
        planner_changes: {},
        baseline_score: 3.5,
        best_score: 3.9,
        sweep_wall_s: 4.2,
      },
    ];
    return doc as unknown as Prediction;
  }

  function retuneSection(html: string): string {
    return html.slice(html.indexOf("<h2>Retune decisions</h2>"), html.indexOf("<h2>Summary</h2>"));
  }

  it("score columns name the objective and its units; the caption says what it measures", () => {
    const table = retuneSection(renderHtmlReport(retuneDoc("GoodputPerGPU")));
    expect(table).toContain('<th scope="col">Baseline score (GoodputPerGPU, tok/s/GPU)</th>');
    expect(table).toContain('<th scope="col">Best score (GoodputPerGPU, tok/s/GPU)</th>');
    expect(table).toContain(
      "Scores: GoodputPerGPU — SLA-good output tokens per window second per average GPU, tok/s/GPU; higher is better.",
    );
    const ttft = retuneSection(renderHtmlReport(retuneDoc("TTFT")));
    expect(ttft).toContain("Baseline score (TTFT, ms)");
    expect(ttft).toContain("lower is better");
  });

  it("the sweep's wall time, the run's wall time and the processed_* rates are marked as host time", () => {
    const doc = retuneDoc("Goodput") as unknown as Record<string, Record<string, unknown>>;
    doc.summary.processed_tokens_per_s = 1.5e6;
    const html = renderHtmlReport(doc as unknown as Prediction);
    expect(retuneSection(html)).toContain('<th scope="col">Sweep wall time (host s)</th>');
    expect(retuneSection(html)).toContain("Sweep wall time is host time");
    expect(html).toContain("<span>Wall time (host)</span><b>");
    const summary = html.slice(html.indexOf("<h2>Summary</h2>"));
    const hostBlock = summary.slice(summary.indexOf('class="host-head"'));
    expect(summary.indexOf('class="host-head"')).toBeGreaterThan(0);
    for (const key of ["wall_time_ms", "processed_tokens_per_s"]) {
      expect(hostBlock).toContain(`<code>${key}</code><em class="host">host</em>`);
    }
    // virtual-time keys stay in the main list, before the host block
    expect(summary.indexOf("<code>gpu_hours</code>")).toBeLessThan(summary.indexOf('class="host-head"'));
  });
});
