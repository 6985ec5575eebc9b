/**
 * The committed test fixtures (test/fixtures/) are what scripts/derive-test-fixtures.ts derives
 * now from the project data beside the repository. Their sizes: test/fixtures/fixtures.test.ts.
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { deriveFixtures } from "../../scripts/derive-test-fixtures.js";
import { ROOT, SHARED } from "./data.js";

const FIX = "run `node --import tsx scripts/derive-test-fixtures.ts` and commit the result";

describe("committed test fixtures = derivation from ../shared", () => {
  it.each(deriveFixtures(SHARED).map((d) => [relative(ROOT, d.path), d] as const))(
    "%s",
    (name, { path, text }) => {
      const bytes = readFileSync(path);
      const committed = (path.endsWith(".gz") ? gunzipSync(bytes) : bytes).toString("utf8");
      expect(committed === text, `${name} is stale: ${FIX}`).toBe(true);
    },
  );
});
