/**
 * The committed test fixtures (test/fixtures/, derived from ../shared by
 * scripts/derive-test-fixtures.ts; test/shared-data/fixtures.test.ts checks they are current) stay
 * small and hold what the tests that use them expect.
 */
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { FIXTURES } from "../scripts/derive-test-fixtures.js";
import { CONVERSATION_600S, CONVERSATION_600S_ROWS } from "./helpers/fixtures.js";

const ROOT = join(import.meta.dirname, "..");

describe("committed test fixtures", () => {
  it("stay small: ≤ 256 KiB each, ≤ 1 MiB together", () => {
    const sizes = FIXTURES.map((f) => statSync(join(ROOT, f.file)).size);
    sizes.forEach((size, i) => {
      expect(size, `${FIXTURES[i].file} is ${(size / 1024).toFixed(0)} KiB`).toBeLessThanOrEqual(256 * 1024);
    });
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1024 * 1024);
  });

  it("the conversation trace fixture: its first 600 s, in timestamp order", () => {
    expect(FIXTURES.map((f) => join(ROOT, f.file))).toContain(CONVERSATION_600S);
    const rows = gunzipSync(readFileSync(CONVERSATION_600S))
      .toString("utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { timestamp: number });
    expect(rows).toHaveLength(CONVERSATION_600S_ROWS);
    expect(rows[0].timestamp).toBe(0);
    expect(
      rows.every((r, i) => r.timestamp < 600_000 && (i === 0 || r.timestamp >= rows[i - 1].timestamp)),
    ).toBe(true);
  });
});
