// vitest globalSetup: tests run from sources, where the report's inlined ECharts bundle exists only
// once scripts/build-report-assets.mjs has run (npm run build); build it here when missing or stale.
import { buildReportAssets } from "../../scripts/build-report-assets.mjs";

export default async function setup(): Promise<void> {
  await buildReportAssets();
}
