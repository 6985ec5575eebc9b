/**
 * The HTML report in a real browser (issue 7 §3): headless Chromium opens reports of real runs,
 * with every network request recorded and refused, and must render every chart with data points,
 * without a console error or a page error. Screenshots go to .tmp/ for people to look at.
 *
 * Chromium: FLEETSIM_CHROMIUM, else the binary that the @sparticuz/chromium devDependency ships,
 * else a system Chromium (./chromium.ts). Without one this test fails: the report's check in a
 * browser is not optional. The Planner runs replay the seed walkthroughs on the first 600 s of the
 * conversation trace (a committed fixture); the one-hour report's size:
 * test/shared-data/report.oneHour.test.ts.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADVISORY_WARNING } from "../../src/autoscale/plannerSetup.js";
import { cli } from "../helpers/cli.js";
import { CONVERSATION_600S } from "../helpers/fixtures.js";
import { tempDir } from "../helpers/specs.js";
import { findChromium } from "./chromium.js";
import { externalReferences, PLANNER_CHARTS_WITH_SLA } from "./reportFixture.js";

const ROOT = join(import.meta.dirname, "..", "..");
const SCREENSHOTS = join(ROOT, ".tmp");
/** The seed walkthroughs' trace, its first 600 s. */
const FIXTURE_TRACE = `traffic.source.paths=[${CONVERSATION_600S}]`;

interface RenderedChart {
  id: string;
  title: string;
  series: number;
  points: number;
  rendered: boolean;
}

/** The page's globals the test reads (the project compiles without the DOM library). */
interface PageGlobals {
  __fleetsimCharts: RenderedChart[];
  document: { getElementById(id: string): unknown };
  echarts: {
    getInstanceByDom(el: unknown): {
      dispatchAction(action: object): void;
      getOption(): { dataZoom: { start: number; end: number }[] };
    };
  };
}

interface Run {
  name: string;
  config: string;
  /** `--set` overrides of the config. */
  sets?: string[];
  report: string;
  charts: string[];
  screenshot: string;
  /** A `fleetsim compare -o` page of these runs' predictions instead of a predict run. */
  compareOf?: string[];
  /** `fleetsim report` of a recommendation.json from `fleetsim recommend -c config` instead. */
  recommend?: boolean;
  /** The tooltip's head (default: virtual time). */
  tooltipHead?: RegExp;
}

const RUNS: Run[] = [
  {
    // The seed walkthrough with the Planner (ticks every 10 s, throughput every 300 s).
    name: "planner",
    config: "examples/seed-aggregated.yaml",
    sets: [FIXTURE_TRACE],
    report: "",
    charts: PLANNER_CHARTS_WITH_SLA,
    screenshot: join(SCREENSHOTS, "report-screenshot.png"),
  },
  {
    // The disaggregated seed walkthrough: prefill and decode roles in every per-role chart.
    name: "disaggregated planner",
    config: "examples/seed-disaggregated.yaml",
    sets: [FIXTURE_TRACE],
    report: "",
    charts: PLANNER_CHARTS_WITH_SLA,
    screenshot: join(SCREENSHOTS, "report-screenshot-disaggregated.png"),
  },
  {
    // Advisory mode: fixed replicas with the Planner's recommendations marked.
    name: "advisory planner",
    config: "examples/seed-aggregated.yaml",
    sets: [FIXTURE_TRACE, "planner.advisory=true"],
    report: "",
    charts: PLANNER_CHARTS_WITH_SLA,
    screenshot: join(SCREENSHOTS, "report-screenshot-advisory.png"),
  },
  {
    name: "no planner",
    config: "examples/aggregated.yaml",
    report: "",
    charts: ["replicas", "ttft", "itl", "throughput", "sla-attainment", "queue-depth", "kv-utilization"],
    screenshot: join(SCREENSHOTS, "report-screenshot-no-planner.png"),
  },
  {
    // fleetsim compare -o: the Planner run and the fixed one overlaid.
    name: "compare",
    config: "",
    report: "",
    charts: [
      "compare-replicas",
      "compare-gpus",
      "compare-gpu-hours",
      "compare-ttft",
      "compare-itl",
      "compare-sla",
    ],
    screenshot: join(SCREENSHOTS, "compare-screenshot.png"),
    compareOf: ["planner", "no planner"],
  },
  {
    // fleetsim report of a recommendation.json: the Pareto plane with the chosen point pinned.
    name: "recommendation",
    config: "examples/recommend/recommendation.yaml",
    sets: [
      "optimizer={algorithm: random, max_trials: 2, parallelism: 2, seed: 3}",
      "engine.workers.aggregated.scheduler.max_batched_tokens=8192",
      "traffic.load.speedup=64",
    ],
    report: "",
    charts: ["pareto"],
    screenshot: join(SCREENSHOTS, "recommendation-screenshot.png"),
    recommend: true,
    tooltipHead: /^per user = [0-9.,]+ tok\/s\/user$/,
  },
];

beforeAll(async () => {
  for (const run of RUNS) {
    if (run.recommend === true) {
      const out = join(tempDir("fleetsim-recommend-browser-"), "rec");
      const sets = (run.sets ?? []).flatMap((s) => ["--set", s]);
      const r = await cli("recommend", "-c", join(ROOT, run.config), ...sets, "--output-dir", out);
      expect(r.code).toBe(0);
      const page = await cli("report", join(out, "recommendation.json"));
      expect(page.code).toBe(0);
      run.report = join(out, "recommendation.html");
      continue;
    }
    if (run.compareOf !== undefined) {
      const inputs = run.compareOf.map((name) =>
        join(dirname(RUNS.find((r) => r.name === name)?.report ?? ""), "prediction.json"),
      );
      const page = join(tempDir("fleetsim-compare-browser-"), "compare.html");
      const r = await cli("compare", ...inputs, "-o", page);
      expect(r.code).toBe(0);
      run.report = page;
      continue;
    }
    const out = join(tempDir("fleetsim-report-browser-"), "out");
    const sets = (run.sets ?? []).flatMap((s) => ["--set", s]);
    const r = await cli("predict", "-c", join(ROOT, run.config), ...sets, "--output-dir", out, "--html");
    // An advisory replay's only stderr line is its start-up warning (docs/cli.md), besides the
    // seed's budget warning (its max_num_gpus equals the starting GPUs; cli/validate.ts).
    const advisory = run.sets?.includes("planner.advisory=true") ?? false;
    const err = r.err.replace(/^fleetsim: warning: planner\.max_num_gpus = \d+ is equal to .*\n/m, "");
    expect(err).toBe(advisory ? `fleetsim: warning: ${ADVISORY_WARNING}\n` : "");
    expect(r.code).toBe(0);
    run.report = join(out, "report.html");
  }
});

describe("report files of real runs", () => {
  it.each(RUNS.map((r) => [r.name, r] as const))("%s: references nothing outside the file", (_, run) => {
    expect(externalReferences(readFileSync(run.report, "utf8"))).toEqual([]);
  });
});

/** What happened while a page loaded: every request, console errors, uncaught exceptions. */
interface PageLog {
  requests: string[];
  errors: string[];
}

async function openReport(browser: Browser, file: string): Promise<{ page: Page; log: PageLog }> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const url = pathToFileURL(file).href;
  const log: PageLog = { requests: [], errors: [] };
  // Every request is recorded; anything but the report itself is refused, so nothing can leak out.
  await context.route("**/*", (route) => (route.request().url() === url ? route.continue() : route.abort()));
  const page = await context.newPage();
  page.on("request", (req) => log.requests.push(req.url()));
  page.on("console", (msg) => {
    if (msg.type() === "error") log.errors.push(`console.error: ${msg.text()}`);
  });
  page.on("pageerror", (err) => log.errors.push(`page error: ${err.message}`));
  await page.goto(url, { waitUntil: "load" });
  return { page, log };
}

describe("the report in headless Chromium", () => {
  let launched: Browser | null = null;

  /**
   * The browser, launched on first use. Without Chromium every test here fails with what to do
   * (a failing beforeAll would only mark them skipped).
   */
  async function browser(): Promise<Browser> {
    if (launched === null) {
      const found = await findChromium();
      try {
        launched = await chromium.launch({ executablePath: found.executablePath, headless: true });
      } catch (err) {
        throw new Error(
          `Chromium from ${found.source} (${found.executablePath}) does not start: ${String(err)}`,
        );
      }
    }
    return launched;
  }

  afterAll(async () => {
    await launched?.close();
  });

  it.each(RUNS.map((r) => [r.name, r] as const))(
    "%s: every chart renders with data points, without errors or network requests",
    async (_, run) => {
      const { page, log } = await openReport(await browser(), run.report);
      await page.waitForFunction(() => "__fleetsimCharts" in globalThis, null, { timeout: 15_000 });
      const charts = await page.evaluate(() => (globalThis as unknown as PageGlobals).__fleetsimCharts);
      expect(charts.map((c) => c.id)).toEqual(run.charts);
      for (const c of charts) {
        expect(c.rendered, `${c.id} has a canvas`).toBe(true);
        expect(c.points, `${c.id} has data points`).toBeGreaterThan(0);
      }

      // Tooltips go through the page's own formatter: hovering each chart must show one.
      for (const c of charts) {
        const el = page.locator(`#chart-${c.id}`);
        await el.scrollIntoViewIfNeeded();
        const box = await el.boundingBox();
        if (box === null) throw new Error(`chart ${c.id} has no layout box`);
        // ECharts tracks the pointer through mousemove events: enter, then move inside.
        await page.mouse.move(box.x + 5, box.y + 5);
        await page.mouse.move(box.x + box.width * 0.55, box.y + box.height * 0.5, { steps: 5 });
        await expect
          .poll(() => page.locator(`#chart-${c.id} .tt-head`).first().textContent(), { timeout: 5000 })
          .toMatch(run.tooltipHead ?? /^t = [0-9.,]+ (s|min|h)$/);
      }
      await page.mouse.move(0, 0);
      // Tooltips fade out over 0.2 s: let them go before the screenshot.
      await page.waitForTimeout(500);

      // Zooming one chart zooms the others (charts are connected); a one-chart page has none to link.
      if (run.charts.length > 1) {
        const zoomed = await page.evaluate(() => {
          const g = globalThis as unknown as PageGlobals;
          const ids = g.__fleetsimCharts.map((c) => c.id);
          const chartOf = (id: string) =>
            g.echarts.getInstanceByDom(g.document.getElementById(`chart-${id}`));
          chartOf(ids[1]).dispatchAction({ type: "dataZoom", start: 20, end: 60 });
          const other = chartOf(ids[ids.length - 1]).getOption().dataZoom[0];
          chartOf(ids[1]).dispatchAction({ type: "dataZoom", start: 0, end: 100 });
          return [other.start, other.end];
        });
        expect(zoomed).toEqual([20, 60]);
      }

      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: run.screenshot, fullPage: true });
      expect(statSync(run.screenshot).size).toBeGreaterThan(10_000);

      expect(log.errors).toEqual([]);
      expect(log.requests).toEqual([pathToFileURL(run.report).href]);
      await page.context().close();
    },
  );

  it("the checks above do notice console errors, page errors and external requests", async () => {
    // A control page: if the harness missed these, the assertions above would prove nothing.
    const dir = tempDir("fleetsim-report-browser-");
    const file = join(dir, "bad.html");
    writeFileSync(
      file,
      '<!DOCTYPE html><html><body><img src="https://example.invalid/pixel.png">' +
        '<script>console.error("boom"); throw new Error("bang");</script></body></html>',
    );
    const { page, log } = await openReport(await browser(), file);
    await expect.poll(() => log.requests.length).toBe(2);
    expect(log.requests[1]).toBe("https://example.invalid/pixel.png");
    expect(log.errors).toEqual(expect.arrayContaining(["console.error: boom", "page error: bang"]));
    await page.context().close();
  });
});
