/**
 * docs/api.md documents every `plannerConfig` option the knob table (src/knobs/planner.ts)
 * defines, with its aliases, so a new row cannot be added to the API without its documentation.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type KnobRow, PLANNER_KNOBS } from "../../src/knobs/planner.js";

const DOC = readFileSync(join(import.meta.dirname, "..", "..", "docs", "api.md"), "utf8");

describe("docs/api.md and the knob table", () => {
  it("names every plannerConfig option and alias of the table", () => {
    const names = (PLANNER_KNOBS as readonly KnobRow[]).flatMap((row) =>
      row.api === null ? [] : [row.api, ...(row.apiAliases ?? [])],
    );
    expect(names.filter((name) => !DOC.includes(`\`${name}\``))).toEqual([]);
  });
});
