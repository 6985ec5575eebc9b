import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Tests on the project data beside the repository (../shared) run in `npm run test:shared`
    // (vitest.shared.config.ts), and those needing a redis-server in `npm run test:redis`
    // (vitest.redis.config.ts): `npm test` passes in a clone with nothing beside it.
    exclude: [...configDefaults.exclude, "test/shared-data/**", "test/redis/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default"],
    pool: "forks",
    // Every replay in the suite checks its bookkeeping invariants (src/sim/invariants.ts); CLI
    // subprocesses and sweep workers inherit the variable.
    env: { FLEETSIM_CHECK_INVARIANTS: "1" },
    // The HTML report inlines a generated ECharts bundle that only `npm run build` makes; the
    // run's temporary files go in one folder, removed at the end (test/helpers/runTempDir.setup.ts).
    globalSetup: ["test/helpers/runTempDir.setup.ts", "test/browser/buildReportAssets.setup.ts"],
  },
});
