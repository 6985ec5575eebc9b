#!/usr/bin/env node
// Builds the charts library the HTML report inlines: a tree-shaken, minified ECharts bundle with
// only what src/report/html uses. `tsc` copies no non-TS files, so `npm run build` runs this with
// `--dist` to place the asset next to the compiled report module as well; vitest's globalSetup
// calls buildReportAssets() so tests running from sources find it too.
import { copyFileSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** The asset's place beside the report module, in sources and in the compiled package. */
export const ASSET_RELATIVE = join("report", "html", "generated", "echarts.min.js");
export const SOURCE_ASSET = join(ROOT, "src", ASSET_RELATIVE);
const DIST_ASSET = join(ROOT, "dist", ASSET_RELATIVE);

// Exactly the chart types, components and renderer the report's options use (report/html/charts.ts).
const ENTRY = `
import { use, init, connect, getInstanceByDom } from "echarts/core";
import { LineChart, BarChart, ScatterChart } from "echarts/charts";
import {
  GridComponent, TooltipComponent, LegendComponent, TitleComponent, DataZoomComponent,
  MarkLineComponent, MarkPointComponent, MarkAreaComponent,
} from "echarts/components";
import { CanvasRenderer } from "echarts/renderers";
use([
  LineChart, BarChart, ScatterChart, GridComponent, TooltipComponent, LegendComponent, TitleComponent,
  DataZoomComponent, MarkLineComponent, MarkPointComponent, MarkAreaComponent, CanvasRenderer,
]);
globalThis.echarts = { init, connect, getInstanceByDom };
`;

function echartsVersion() {
  return JSON.parse(readFileSync(join(ROOT, "node_modules", "echarts", "package.json"), "utf8")).version;
}

/** True when the asset exists and is newer than this script and the installed ECharts. */
function upToDate(asset) {
  try {
    const built = statSync(asset).mtimeMs;
    const inputs = [fileURLToPath(import.meta.url), join(ROOT, "node_modules", "echarts", "package.json")];
    return inputs.every((p) => statSync(p).mtimeMs <= built);
  } catch {
    return false;
  }
}

/**
 * Writes the bundle to src/report/html/generated/ (atomically: parallel test runs may race) unless
 * it is up to date; with `dist`, copies it into dist/ too. Returns the source asset's path.
 */
export async function buildReportAssets({ dist = false, force = false } = {}) {
  if (force || !upToDate(SOURCE_ASSET)) {
    // esbuild is a dev dependency: imported only when a build is needed.
    const { build } = await import("esbuild");
    const result = await build({
      stdin: { contents: ENTRY, resolveDir: ROOT, loader: "js" },
      bundle: true,
      minify: true,
      format: "iife",
      target: "es2020",
      platform: "browser",
      legalComments: "none",
      write: false,
      logLevel: "silent",
    });
    const code = result.outputFiles[0].text;
    // The bundle is inlined in a <script> element: a closing tag inside it would end the element.
    if (/<\/script/i.test(code)) throw new Error("ECharts bundle contains '</script'; cannot inline it");
    const banner = `/* ECharts ${echartsVersion()} (Apache-2.0), tree-shaken for the fleetsim report */\n`;
    mkdirSync(dirname(SOURCE_ASSET), { recursive: true });
    const tmp = `${SOURCE_ASSET}.${process.pid}.tmp`;
    writeFileSync(tmp, banner + code);
    renameSync(tmp, SOURCE_ASSET);
  }
  if (dist) {
    mkdirSync(dirname(DIST_ASSET), { recursive: true });
    copyFileSync(SOURCE_ASSET, DIST_ASSET);
  }
  return SOURCE_ASSET;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const path = await buildReportAssets({ dist: args.includes("--dist"), force: args.includes("--force") });
  console.log(
    `report assets: ${path} (${statSync(path).size} bytes)${args.includes("--dist") ? " + dist/" : ""}`,
  );
}
