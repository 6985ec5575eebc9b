/**
 * The HTML report of the one-hour seed walkthrough with the Planner (ticks every 10 s) stays under
 * 3 MB and self-contained. Needs ../shared (npm run test:shared); the report in a browser, on the
 * first 600 s of the trace: test/browser/report.browser.test.ts.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { externalReferences } from "../browser/reportFixture.js";
import { cli } from "../helpers/cli.js";
import { configWarningLines } from "../helpers/plannerRun.js";
import { tempDir } from "../helpers/specs.js";
import { ROOT } from "./data.js";

const MAX_REPORT_BYTES = 3 * 1024 * 1024;

describe("the one-hour seed walkthrough's HTML report", () => {
  it("is under 3 MB and references nothing outside the file", async () => {
    const out = join(tempDir("fleetsim-report-hour-"), "out");
    const r = await cli(
      "predict",
      "-c",
      join(ROOT, "examples/seed-aggregated.yaml"),
      "--output-dir",
      out,
      "--html",
    );
    // The seed's budget equals its starting GPUs: predict says so (cli/validate.ts), nothing else.
    expect(r.err).toBe(configWarningLines(join(ROOT, "examples/seed-aggregated.yaml"), []));
    expect(r.code).toBe(0);
    const report = join(out, "report.html");
    expect(statSync(report).size).toBeLessThan(MAX_REPORT_BYTES);
    expect(externalReferences(readFileSync(report, "utf8"))).toEqual([]);
  });
});
