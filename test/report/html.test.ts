import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { scriptSafeJson } from "../../src/report/html/format.js";
import { renderHtmlReport, writeHtmlReport } from "../../src/report/html/index.js";
import { jsonSyntaxError, lineColumn } from "../../src/report/html/readPrediction.js";
import type { Prediction } from "../../src/report/prediction.js";
import {
  externalReferences,
  fixturePrediction,
  PLANNER_CHARTS,
  payloadOf,
} from "../browser/reportFixture.js";
import { tempDir } from "../helpers/specs.js";

function chart(html: string, id: string) {
  const c = payloadOf(html).charts.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no chart ${id}`);
  return c;
}

function seriesNames(html: string, id: string): string[] {
  return chart(html, id).option.series.map((s) => s.name);
}

describe("renderHtmlReport: charts from the data contract", () => {
  it("a disaggregated run with a Planner gets every chart", () => {
    const html = renderHtmlReport(fixturePrediction());
    expect(payloadOf(html).charts.map((c) => c.id)).toEqual(PLANNER_CHARTS);
    for (const c of payloadOf(html).charts) {
      // every chart has drawable points, none is empty
      const points = c.option.series.flatMap((s) => s.data).length;
      expect(points, c.id).toBeGreaterThan(0);
    }
    expect(payloadOf(html).timeUnit).toBe("s");
  });

  it("replicas come from the Planner's ticks, with scaling events and throughput floors", () => {
    const html = renderHtmlReport(fixturePrediction());
    const names = seriesNames(html, "replicas");
    expect(names).toEqual(
      expect.arrayContaining([
        "prefill ready",
        "decode ready",
        "decode provisioned",
        "decode throughput floor",
        "scale up",
      ]),
    );
    const decode = chart(html, "replicas").option.series.find((s) => s.name === "decode ready");
    // held from time 0 at the first tick's value, stepping to 2 at the 30 s tick, until the run's end (60 s)
    expect(decode?.data).toEqual([
      [0, 1],
      [10, 1],
      [20, 1],
      [30, 2],
      [40, 2],
      [50, 2],
      [60, 2],
    ]);
    const up = chart(html, "replicas").option.series.find((s) => s.name === "scale up");
    expect(up?.data).toEqual([{ value: [20, 2], name: "decode 1 → 2" }]);
  });

  it("an advisory run marks its recommendations, which change no replica count", () => {
    const prediction = fixturePrediction();
    const planner = prediction.planner as unknown as Record<string, unknown>;
    planner.recommended_scaling_events = [
      { at_s: 40, component: "decode", from_count: 2, to_count: 3, reason: "scale_up" },
      { at_s: 50, component: "prefill", from_count: 1, to_count: 0, reason: "scale_down" },
    ];
    const html = renderHtmlReport(prediction);
    const series = chart(html, "replicas").option.series;
    expect(series.find((s) => s.name === "recommended up")?.data).toEqual([
      { value: [40, 3], name: "decode 2 → 3" },
    ]);
    expect(series.find((s) => s.name === "recommended down")?.data).toEqual([
      { value: [50, 0], name: "prefill 1 → 0" },
    ]);
    expect(html).toContain("diamonds: advisory recommendations (not applied)");
    // The ready line still follows the ticks, not the recommendations.
    const decode = series.find((s) => s.name === "decode ready");
    expect(decode?.data.at(-1)).toEqual([60, 2]);
  });

  it("retune decisions get a table: window, outcome and reason, chosen point, Planner changes, scores", () => {
    const prediction = fixturePrediction();
    const planner = prediction.planner as unknown as Record<string, unknown>;
    const point = (temperature: number, sensitivity: number) => ({
      router: { overlap_score_credit: 1, router_temperature: temperature },
      planner: { load_scaling_down_sensitivity: sensitivity },
    });
    planner.retune_events = [
      {
        decision_id: "retune-0-w0",
        outcome: "applied",
        reason: null,
        window_index: 0,
        window_start_s: 0,
        window_end_s: 600,
        decided_at_s: 665,
        num_requests: 4100,
        num_candidates: 6,
        previous: point(1, 80),
        chosen: point(0, 70),
        planner_changes: { load_scaling_down_sensitivity: 70 },
        baseline_score: 3.0341234567,
        best_score: 3.18512345,
        sweep_wall_s: 4.2,
      },
      {
        decision_id: "retune-1-w1",
        outcome: "kept",
        reason: "empty window",
        window_index: 1,
        window_start_s: 600,
        window_end_s: 1200,
        decided_at_s: 1265,
        num_requests: 0,
        num_candidates: 0,
        previous: point(0, 70),
        chosen: null,
        planner_changes: {},
        baseline_score: null,
        best_score: null,
        sweep_wall_s: null,
      },
    ];
    const html = renderHtmlReport(prediction);
    const table = html.slice(html.indexOf("<h2>Retune decisions</h2>"), html.indexOf("<h2>Summary</h2>"));
    expect(table).toContain("0 (0–600 s)");
    expect(table).toContain('<span class="outcome outcome-applied">applied</span>');
    expect(table).toContain(
      "<td>overlap_score_credit=1, router_temperature=0</td><td>load_scaling_down_sensitivity=70</td>",
    );
    expect(table).toContain("<td>3.03412</td><td>3.18512</td>");
    expect(table).toContain('<span class="outcome outcome-kept">kept: empty window</span>');
    expect(table.match(/<tr>/g)?.length).toBe(3); // the header and two decisions
  });

  it("no retune section without retune; a line when retune made no decision", () => {
    expect(renderHtmlReport(fixturePrediction())).not.toContain("Retune decisions");
    const prediction = fixturePrediction();
    (prediction.planner as unknown as Record<string, unknown>).retune_events = [];
    const html = renderHtmlReport(prediction);
    expect(html).toContain("<h2>Retune decisions</h2>");
    expect(html).toContain("Retune made no decision in this run");
  });

  it("observed load covers the window before a throughput tick, the prediction the window after", () => {
    const html = renderHtmlReport(fixturePrediction());
    const series = chart(html, "load-rate").option.series;
    expect(series.find((s) => s.name === "observed")?.data).toEqual([
      [0, 10],
      [30, 10],
    ]);
    expect(series.find((s) => s.name === "predicted")?.data).toEqual([
      [30, 11],
      [60, 11],
    ]);
    expect(seriesNames(html, "load-lengths")).toEqual([
      "ISL observed",
      "ISL predicted",
      "OSL observed",
      "OSL predicted",
    ]);
  });

  it("SLA lines come from the options, else from the Planner's targets, else are absent", () => {
    expect(seriesNames(renderHtmlReport(fixturePrediction()), "ttft")).toContain("SLA 500 ms");
    expect(seriesNames(renderHtmlReport(fixturePrediction()), "itl")).toContain("SLA 40 ms");
    const custom = renderHtmlReport(fixturePrediction(), { sla: { ttftMs: 900 } });
    expect(seriesNames(custom, "ttft")).toContain("SLA 900 ms");
    expect(seriesNames(custom, "itl")).toContain("SLA 40 ms");
    const none = renderHtmlReport(fixturePrediction({ planner: false }));
    expect(seriesNames(none, "ttft")).toEqual(["p99", "p90", "p50"]);
  });

  it("a run without a Planner keeps its latency, throughput and worker charts, replicas from the time series", () => {
    const html = renderHtmlReport(fixturePrediction({ planner: false }));
    expect(payloadOf(html).charts.map((c) => c.id)).toEqual([
      "replicas",
      "ttft",
      "itl",
      "throughput",
      "queue-depth",
      "kv-utilization",
    ]);
    expect(seriesNames(html, "replicas")).toEqual(["prefill ready", "decode ready"]);
    expect(html).toContain("Planner</span><b>off</b>");
  });

  it("an older prediction.json without timeseries renders the Planner charts, the summary and a notice", () => {
    const html = renderHtmlReport(fixturePrediction({ timeseries: false }));
    expect(payloadOf(html).charts.map((c) => c.id)).toEqual(["replicas", "load-rate", "load-lengths"]);
    expect(html).toContain("has no time series");
    expect(html).toContain("Time to first token (ms)");
    const bare = renderHtmlReport(fixturePrediction({ timeseries: false, planner: false }));
    expect(payloadOf(bare).charts).toEqual([]);
    expect(bare).toContain("completed_requests");
  });

  it("a chart without any data point is left out rather than drawn empty", () => {
    const doc = fixturePrediction({ planner: false }) as unknown as {
      timeseries: { ttft_ms: Record<string, (number | null)[]> };
    };
    for (const k of ["p50", "p90", "p99"])
      doc.timeseries.ttft_ms[k] = doc.timeseries.ttft_ms[k].map(() => null);
    const html = renderHtmlReport(doc as unknown as Prediction);
    expect(payloadOf(html).charts.map((c) => c.id)).not.toContain("ttft");
    expect(payloadOf(html).charts.map((c) => c.id)).toContain("itl");
  });

  it("malformed parts are skipped, not fatal", () => {
    const doc = fixturePrediction() as unknown as Record<string, Record<string, unknown>>;
    doc.timeseries.workers = "oops";
    doc.timeseries.itl_ms = { p50: [1] };
    (doc.planner as Record<string, unknown>).ticks = [null, 3, { at_ms: "x" }];
    const html = renderHtmlReport(doc as unknown as Prediction);
    const ids = payloadOf(html).charts.map((c) => c.id);
    expect(ids).toEqual(["replicas", "ttft", "throughput"]);
  });

  it("shows the KPIs and the whole summary", () => {
    const html = renderHtmlReport(fixturePrediction());
    expect(html).toContain('<div class="kpi-value">8.300 req/s</div>');
    // good of arrived requests (500 of 600), as the fleet block counts SLA attainment
    expect(html).toContain("83.3% of requests within SLA");
    expect(html).toContain('<div class="kpi-value">100 ms</div>');
    expect(html).toContain("p99 900 ms");
    for (const key of ["gpu_hours", "decode_worker_seconds", "wall_time_ms"]) expect(html).toContain(key);
  });
});

describe("renderHtmlReport: a self-contained, safe page", () => {
  it("inlines the charts library and loads nothing from the network", () => {
    const html = renderHtmlReport(fixturePrediction());
    expect(html).toContain("ECharts 6.1.0");
    expect(externalReferences(html)).toEqual([]);
    expect(html).not.toMatch(/<script[^>]*\ssrc=/i);
  });

  it("escapes the title and keeps the inline data from closing its script element", () => {
    const title = '</script><script>alert("x")</script>';
    const html = renderHtmlReport(fixturePrediction(), { title });
    expect(html).toContain("<title>&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</title>");
    // exactly the page's three script elements are closed
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    const json = scriptSafeJson({ s: "</script><!-- \u2028" });
    expect(json).not.toMatch(/[<\u2028]/);
    expect(JSON.parse(json)).toEqual({ s: "</script><!-- \u2028" });
  });

  it("writeHtmlReport creates parent directories and leaves no temporary file", async () => {
    const dir = tempDir("fleetsim-report-");
    const file = join(dir, "a", "b", "report.html");
    await writeHtmlReport(fixturePrediction(), file);
    expect(readFileSync(file, "utf8").startsWith("<!DOCTYPE html>")).toBe(true);
    expect(readdirSync(join(dir, "a", "b"))).toEqual(["report.html"]);
    await writeHtmlReport(fixturePrediction({ planner: false }), file);
    expect(payloadOf(readFileSync(file, "utf8")).charts.map((c) => c.id)).not.toContain("load-rate");
    expect(existsSync(file)).toBe(true);
  });
});

describe("jsonSyntaxError", () => {
  it.each([
    ['{"a": 1}', null],
    ['[1, 2.5e3, true, null, "x\\u00e9"]', null],
    ['{"a":}', { offset: 5, message: 'unexpected "}", expected a value' }],
    ['{"a": 1,\n}', { offset: 9, message: 'unexpected "}", expected a property name in double quotes' }],
    ['{"a": tru}', { offset: 6, message: 'unexpected "t", expected a value' }],
    ["[1 2]", { offset: 3, message: "unexpected \"2\", expected ',' or ']'" }],
    ['{"a": 1', { offset: 7, message: "unexpected end of file, expected ',' or '}'" }],
    ["", { offset: 0, message: "unexpected end of file, expected a value" }],
    ["{} x", { offset: 3, message: 'unexpected "x", expected the end of the file after the JSON value' }],
    ['"a\\q"', { offset: 3, message: 'unexpected "q", expected an escape character' }],
  ])("%j", (text, expected) => {
    expect(jsonSyntaxError(text)).toEqual(expected);
    // the scanner agrees with JSON.parse on validity
    let valid = true;
    try {
      JSON.parse(text);
    } catch {
      valid = false;
    }
    expect(valid).toBe(expected === null);
  });

  it("lineColumn counts from 1", () => {
    expect(lineColumn("ab\ncd", 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn("ab\ncd", 4)).toEqual({ line: 2, column: 2 });
  });
});
