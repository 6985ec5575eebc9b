import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
    pool: "forks",
    // The HTML report inlines a generated ECharts bundle that only `npm run build` makes.
    globalSetup: ["test/browser/buildReportAssets.setup.ts"],
  },
});
