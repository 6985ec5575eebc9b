/**
 * What config/ derives from the Planner knob table (src/knobs/planner.ts): the `planner` section's
 * keys in `fleetsim schema`, the resolver into PlannerSettings, and `planner.retune.planner`.
 * `KNOB_SAMPLE` (test/helpers/plannerKnobSample.ts: every row's `example`) sets every knob (a
 * non-default value of each row); the first test fails until it covers every row.
 */
import { isAbsolute } from "node:path";
import { describe, expect, it } from "vitest";
import { buildConfigJsonSchema } from "../../src/cli/schema.js";
import { Retune } from "../../src/config/schema/retune.js";
import {
  type KnobRow,
  PLANNER_KNOBS,
  plannerConfigPayload,
  RETUNE_GRID_KNOBS,
} from "../../src/knobs/planner.js";
import { plannerConfigPayloadSchema } from "../../src/output/planner.js";
import { loadYaml, RUNNABLE_PD_ENGINE } from "../helpers/configHelpers.js";
import { KNOB_SAMPLE as SAMPLE, SAMPLE_WARMUP_TRACE as WARMUP } from "../helpers/plannerKnobSample.js";

const ROWS: readonly KnobRow[] = PLANNER_KNOBS;

function sampleSpec() {
  const yaml =
    `planner: ${JSON.stringify(SAMPLE)}\n` +
    "evaluation: {sla: {ttft_ms: 800, itl_ms: 40}}\n" +
    RUNNABLE_PD_ENGINE;
  return loadYaml(yaml, { files: { [WARMUP]: "" } });
}

describe("the planner section from the knob table", () => {
  it("the sample sets every row, each to a value other than its default", () => {
    expect(Object.keys(SAMPLE)).toEqual(ROWS.map((r) => r.yaml));
    for (const row of ROWS) expect(SAMPLE[row.yaml], row.yaml).not.toEqual(row.default);
    // Each example passes its own row's value rule (the section's cross-key rules are checked by
    // resolving the whole sample below).
    for (const row of ROWS) expect(row.value.safeParse(row.example).success, row.yaml).toBe(true);
  });

  it("fleetsim schema lists the rows in row order, then retune, with each row's default", () => {
    const planner = buildConfigJsonSchema("0.0.0").properties!["planner"] as {
      properties: Record<string, { default?: unknown }>;
    };
    expect(Object.keys(planner.properties)).toEqual([...ROWS.map((r) => r.yaml), "retune"]);
    for (const row of ROWS) {
      const node = planner.properties[row.yaml];
      // `optional` rows have no schema default: the section fills it after telling an explicit value.
      if (row.optional) expect(node, row.yaml).not.toHaveProperty("default");
      else expect(node.default, row.yaml).toEqual(row.default);
    }
  });

  it("the resolver puts every row's value into its settings field", () => {
    const settings = sampleSpec().planner as unknown as Record<string, unknown>;
    for (const row of ROWS) {
      if (row.settings === null) continue;
      const value = settings[row.settings];
      if (row.yaml === "load_predictor_warmup_trace") {
        // Resolved against the working directory (the config's directory here).
        expect(isAbsolute(value as string) && (value as string).endsWith(`/${WARMUP}`), String(value)).toBe(
          true,
        );
      } else {
        expect(value, row.yaml).toEqual(SAMPLE[row.yaml]);
      }
    }
  });

  it("the payload of the sample (every row set) is a valid prediction.json planner_config (output/)", () => {
    const payload = plannerConfigPayload(sampleSpec().planner!);
    expect(plannerConfigPayloadSchema.parse(payload)).toEqual(payload);
    for (const row of ROWS)
      if (row.plannerConfig !== null) expect(payload, row.yaml).toHaveProperty(row.plannerConfig);
  });

  it("a `nullable: default` row resolves null to its default (the throughput interval, off in the sample)", () => {
    const row = ROWS.find((r) => r.yaml === "throughput_adjustment_interval_seconds")!;
    expect(row.nullable).toBe("default");
    const yaml =
      `planner: ${JSON.stringify({ ...SAMPLE, [row.yaml]: null })}\n` +
      "evaluation: {sla: {ttft_ms: 800, itl_ms: 40}}\n" +
      RUNNABLE_PD_ENGINE;
    const settings = loadYaml(yaml, { files: { [WARMUP]: "" } }).planner as unknown as Record<
      string,
      unknown
    >;
    expect(settings[row.settings!]).toBe(row.default);
  });
});

describe("planner.retune.planner from the knob table", () => {
  const parse = (planner: Record<string, unknown>) => Retune.safeParse({ interval_seconds: 60, planner });

  it("a grid knob's `default` domain is its row's, as points of its settings field", () => {
    for (const row of RETUNE_GRID_KNOBS) {
      const r = parse({ [row.yaml]: "default" });
      expect(r.success, row.yaml).toBe(true);
      expect(r.data?.planner).toEqual({
        kind: "fields",
        dimensions: [{ key: row.yaml, points: row.retune.defaults.map((v) => ({ [row.settings!]: v })) }],
        loadPredictor: null,
      });
    }
  });

  it("every other row is rejected: schedule knobs and predictor fields by name, the rest as unknown keys", () => {
    for (const row of ROWS.filter((r) => r.retune.kind !== "grid" && r.yaml !== "load_predictor")) {
      const r = parse({ [row.yaml]: SAMPLE[row.yaml] });
      expect(r.success, row.yaml).toBe(false);
      const messages = r.error!.issues.map((i) => i.message).join("\n");
      if (row.retune.kind === "schedule") expect(messages, row.yaml).toContain("cannot be retuned");
      else if (row.retune.kind === "predictor")
        expect(messages, row.yaml).toContain("load-predictor pre-sweep");
      else
        expect(
          r.error!.issues.map((i) => i.code),
          row.yaml,
        ).toEqual(["unrecognized_keys"]);
    }
  });

  it("a grid knob's value rule is its row's: a value the row rejects is rejected in a domain", () => {
    const bad: Readonly<Record<string, unknown>> = {
      fpm_sample_bucket_size: 8,
      load_scaling_down_sensitivity: 101,
    };
    for (const row of RETUNE_GRID_KNOBS) {
      const value = bad[row.yaml] ?? 0;
      expect(row.value.safeParse(value).success, row.yaml).toBe(false);
      expect(parse({ [row.yaml]: { choices: [value] } }).success, row.yaml).toBe(false);
    }
  });
});
