import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// `npm run test:shared`: the tests whose point is the full project data beside the repository
// (../shared: the seed walkthroughs on the one-hour conversation trace, the perf-data tables, the
// model configs; test/shared-data/). The first globalSetup fails the run when the data is missing.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/shared-data/**/*.test.ts"],
    exclude: configDefaults.exclude,
    globalSetup: [
      "test/shared-data/requireSharedData.setup.ts",
      "test/helpers/runTempDir.setup.ts",
      "test/browser/buildReportAssets.setup.ts",
    ],
  },
});
