/**
 * The Planner knob table (src/knobs/planner.ts) and what planner/ derives from it: the settings
 * fields (checked at compile time), the PlannerConfig payload and the retune points' live names.
 * Every check runs over all rows, so a new row is covered without editing this file.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  DERIVED_PLANNER_CONFIG,
  FIXED_PLANNER_SETTINGS,
  fieldSchema,
  type Knob,
  type KnobRow,
  type KnobSettings,
  PLANNER_KNOBS,
  plannerConfigPayload,
  RETUNE_GRID_KNOBS,
  RETUNE_PREDICTOR_KNOBS,
  RETUNE_PRESET_GROUPS,
  type RetunePlannerField,
} from "../../src/knobs/planner.js";
import {
  PLANNER_LIVE_NAMES,
  PREDICTOR_LIVE_NAMES,
  predictorFieldsOf,
  startupPoint,
} from "../../src/planner/retune/points.js";
import { FPM_SAMPLING_PRESETS, LOAD_SENSITIVITY_PRESETS } from "../../src/planner/retune/presets.js";
import type { LoadPredictorFields, PlannerSettings } from "../../src/planner/types.js";

const ROWS: readonly KnobRow[] = PLANNER_KNOBS;
const withSettings = ROWS.filter((r) => r.settings !== null);

/** PlannerSettings with every knob at its default (derived fields as an aggregated `throughput` run). */
function defaultSettings(): PlannerSettings {
  const knobs = Object.fromEntries(
    withSettings.map((r) => [r.settings, r.default]),
  ) as unknown as KnobSettings;
  return {
    ...knobs,
    ...FIXED_PLANNER_SETTINGS,
    mode: "agg",
    scaleIntervalS: 5,
    ttftMs: 500,
    itlMs: 50,
    prefillScaleUpQueueTokens: null,
    prefillScaleDownQueueTokens: null,
    decodeScaleUpKvRate: null,
    decodeScaleDownKvRate: null,
  };
}

describe("the knob table", () => {
  it("names are unique in every column", () => {
    for (const column of ["yaml", "plannerConfig", "api", "settings"] as const) {
      const names = ROWS.map((r) => r[column]).filter((n) => n !== null);
      expect(new Set(names).size, column).toBe(names.length);
    }
    const aliases = ROWS.flatMap((r) => r.apiAliases ?? []);
    expect(new Set([...aliases, ...ROWS.map((r) => r.api)]).size).toBe(aliases.length + ROWS.length);
  });

  it("no knob writes a PlannerConfig name a derived setting writes", () => {
    const derived = new Set<string>([
      ...Object.values(DERIVED_PLANNER_CONFIG).map((d) => d.name),
      "scheduling",
    ]);
    expect(ROWS.filter((r) => r.plannerConfig !== null && derived.has(r.plannerConfig))).toEqual([]);
    const derivedFields = new Set([
      ...Object.keys(DERIVED_PLANNER_CONFIG),
      ...Object.keys(FIXED_PLANNER_SETTINGS),
    ]);
    expect(withSettings.filter((r) => derivedFields.has(r.settings!)).map((r) => r.yaml)).toEqual([]);
  });

  it.each(ROWS.map((r) => [r.yaml, r] as const))("%s: its default is what the section fills in", (_, row) => {
    if (row.optional) {
      // Filled by the section transform instead; the value rule accepts it.
      expect(fieldSchema(row).parse(undefined)).toBeUndefined();
      expect(row.value.parse(row.default)).toBe(row.default);
      return;
    }
    expect(fieldSchema(row).parse(undefined)).toBe(row.default);
    if (row.default === null) expect(row.nullable).toBeDefined();
    else expect(row.value.parse(row.default)).toBe(row.default);
    // A row that takes null accepts it, one that does not rejects it.
    expect(fieldSchema(row).safeParse(null).success).toBe(row.nullable !== undefined);
  });

  it("a settings field is a camelCase name, a row without one is the policy switch alone", () => {
    for (const row of withSettings) expect(row.settings).toMatch(/^[a-z][A-Za-z0-9]*$/);
    expect(ROWS.filter((r) => r.settings === null).map((r) => r.yaml)).toEqual(["policy"]);
  });

  it("settings types come from the rows: every row's field and nothing else (compile time)", () => {
    expectTypeOf<keyof KnobSettings>().toEqualTypeOf<Exclude<Knob["settings"], null>>();
    expectTypeOf<PlannerSettings>().toExtend<KnobSettings>();
    expectTypeOf<PlannerSettings["maxGpuBudget"]>().toEqualTypeOf<number>();
    expectTypeOf<PlannerSettings["prefillMinEndpoint"]>().toEqualTypeOf<number | null>();
    // `nullable: default` intervals hold the default, never null.
    expectTypeOf<PlannerSettings["throughputAdjustmentIntervalS"]>().toEqualTypeOf<number>();
    expectTypeOf<PlannerSettings["optimizationTarget"]>().toEqualTypeOf<
      "throughput" | "latency" | "load" | "sla"
    >();
    expectTypeOf<RetunePlannerField>().toEqualTypeOf<
      Extract<Knob, { readonly retune: { readonly kind: "grid" } }>["settings"]
    >();
  });
});

describe("the PlannerConfig payload", () => {
  it("carries every row with a PlannerConfig name, the derived settings and scheduling, nothing else", () => {
    const s = defaultSettings();
    const payload = plannerConfigPayload(s) as Record<string, unknown>;
    const always = ROWS.filter((r) => r.plannerConfig !== null && r.written !== "notDefault");
    expect(Object.keys(payload).sort()).toEqual(
      [
        ...always.map((r) => r.plannerConfig!),
        ...Object.values(DERIVED_PLANNER_CONFIG).map((d) => d.name),
        "scheduling",
      ].sort(),
    );
    const values = s as unknown as Record<string, unknown>;
    for (const row of always) expect(payload[row.plannerConfig!], row.yaml).toEqual(values[row.settings!]);
    for (const [field, d] of Object.entries(DERIVED_PLANNER_CONFIG))
      expect(payload[d.name]).toBe(values[field]);
    expect(payload["scheduling"]).toEqual({ scale_interval_seconds: 5 });
  });

  it("reads each field from its own settings field (a changed value shows under its name only)", () => {
    const base = plannerConfigPayload(defaultSettings()) as Record<string, unknown>;
    for (const row of ROWS.filter((r) => r.plannerConfig !== null)) {
      const marker = `changed:${row.settings}`;
      const payload = plannerConfigPayload({ ...defaultSettings(), [row.settings!]: marker }) as Record<
        string,
        unknown
      >;
      expect(payload[row.plannerConfig!], row.yaml).toBe(marker);
      const changed = Object.keys(payload).filter(
        (k) => JSON.stringify(payload[k]) !== JSON.stringify(base[k]),
      );
      expect(changed, row.yaml).toEqual([row.plannerConfig]);
    }
  });

  it("a `notDefault` row is written only when it differs from its default", () => {
    for (const row of ROWS.filter((r) => r.written === "notDefault")) {
      expect(plannerConfigPayload(defaultSettings())).not.toHaveProperty(row.plannerConfig!);
    }
  });
});

describe("retune points from the table", () => {
  it("grid fields and their live names are the grid rows, in the canonical dimension order", () => {
    const grid = ROWS.filter((r) => r.retune.kind === "grid");
    expect(Object.entries(PLANNER_LIVE_NAMES)).toEqual(
      RETUNE_GRID_KNOBS.map((r) => [r.settings, r.plannerConfig]),
    );
    expect(new Set(RETUNE_GRID_KNOBS)).toEqual(new Set(grid));
    // Grouped knobs come group by group (group order), each group's in row order.
    const groupRank = (r: KnobRow) =>
      r.retune.kind === "grid" && r.retune.group !== undefined
        ? RETUNE_PRESET_GROUPS.indexOf(r.retune.group)
        : RETUNE_PRESET_GROUPS.length;
    const ranks = RETUNE_GRID_KNOBS.map(groupRank);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
  });

  it("the preset groups set exactly their knobs' fields", () => {
    for (const [group, presets] of [
      ["load_sensitivity", LOAD_SENSITIVITY_PRESETS],
      ["fpm_sampling", FPM_SAMPLING_PRESETS],
    ] as const) {
      const fields = RETUNE_GRID_KNOBS.filter((r) => r.retune.group === group).map((r) => r.settings);
      for (const preset of presets)
        expect(Object.keys(preset.value), `${group}.${preset.name}`).toEqual(fields);
    }
  });

  it("a grid knob's integer flag matches its value rule, and its default domain passes that rule", () => {
    for (const row of RETUNE_GRID_KNOBS) {
      for (const v of row.retune.defaults)
        expect(row.value.safeParse(v).success, `${row.yaml}=${v}`).toBe(true);
      const fractional = row.retune.defaults[0] + 0.5;
      expect(row.value.safeParse(fractional).success, row.yaml).toBe(!row.retune.integer);
    }
  });

  it("predictor fields and live names are the predictor rows; a family keeps its own knobs only", () => {
    expect(Object.entries(PREDICTOR_LIVE_NAMES)).toEqual(
      RETUNE_PREDICTOR_KNOBS.map((r) => [r.settings, r.plannerConfig]),
    );
    const s = defaultSettings();
    for (const family of ["constant", "arima", "prophet", "kalman"] as const) {
      const fields = predictorFieldsOf({ ...s, loadPredictor: family });
      const expected = RETUNE_PREDICTOR_KNOBS.filter(
        (r) => r.retune.family === "all" || r.retune.family === family,
      ).map((r) => r.settings);
      expect(Object.keys(fields), family).toEqual(expected);
    }
    expectTypeOf<keyof LoadPredictorFields>().toEqualTypeOf<
      Extract<Knob, { readonly retune: { readonly kind: "predictor" } }>["settings"]
    >();
  });

  it("the startup point holds every grid field at the run's value", () => {
    const s = { ...defaultSettings(), maxNumFpmSamples: 7, loadMinObservations: 9 };
    const point = startupPoint({ policy: "round_robin" }, s);
    const values = s as unknown as Record<string, unknown>;
    expect(point.planner).toEqual(
      Object.fromEntries(RETUNE_GRID_KNOBS.map((r) => [r.settings, values[r.settings!]])),
    );
    expect(point.router).toBeNull();
  });
});
