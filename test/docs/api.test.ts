/**
 * docs/api.md documents every `plannerConfig` option the knob table (src/knobs/planner.ts)
 * defines, with its aliases, and every option the replay functions accept (their accepted-key
 * lists, which the compiler ties to the public types), so an option cannot be added to the API
 * without its documentation.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ENGINE_ARG_KEYS, EXTERNAL_CONFIG_KEYS } from "../../src/api/engineArgs.js";
import { PLANNER_CONFIG_KEYS } from "../../src/api/plannerConfig.js";
import { ROUTER_CONFIG_KEYS, SYNTHETIC_KEYS, TRACE_KEYS } from "../../src/api/translate.js";
import { type KnobRow, PLANNER_KNOBS } from "../../src/knobs/planner.js";

const DOC = readFileSync(join(import.meta.dirname, "..", "..", "docs", "api.md"), "utf8");

describe("docs/api.md and the knob table", () => {
  it("names every plannerConfig option and alias of the table", () => {
    const names = (PLANNER_KNOBS as readonly KnobRow[]).flatMap((row) =>
      row.api === null ? [] : [row.api, ...(row.apiAliases ?? [])],
    );
    expect(names.filter((name) => !DOC.includes(`\`${name}\``))).toEqual([]);
  });

  it("names every option, engine argument, timing_model.config and routerConfig field, and PlannerConfig field", () => {
    const names = [
      ...TRACE_KEYS,
      ...SYNTHETIC_KEYS,
      ...ENGINE_ARG_KEYS,
      ...ROUTER_CONFIG_KEYS,
      ...PLANNER_CONFIG_KEYS,
    ];
    expect(names.filter((name) => !DOC.includes(`\`${name}\``))).toEqual([]);
    // Named in full (`timing_model.config.tp`) or after a full name (`timing_model.config.moe_tp` / `moe_ep`).
    expect(
      EXTERNAL_CONFIG_KEYS.filter(
        (key) => !DOC.includes(`\`timing_model.config.${key}\``) && !DOC.includes(`\`${key}\``),
      ),
    ).toEqual([]);
  });
});
