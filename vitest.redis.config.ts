import { configDefaults, defineConfig } from "vitest/config";
import base from "./vitest.config.js";

// `npm run test:redis`: the Redis executor's tests against a real redis-server (test/redis/;
// test/helpers/redisServer.ts starts one per file and fails, never skips, without the binary).
// .ci/run installs Debian's redis-server and runs them; `npm test` needs nothing beside the repo.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ["test/redis/**/*.test.ts"],
    exclude: configDefaults.exclude,
    globalSetup: ["test/helpers/runTempDir.setup.ts"],
  },
});
