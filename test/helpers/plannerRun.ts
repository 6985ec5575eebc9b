/**
 * Running `fleetsim predict` in process with a Planner, and the slice of prediction.json the
 * Planner tests read (shared by test/planner/e2e.test.ts and test/shared-data/seed.planner.test.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { configWarnings } from "../../src/cli/validate.js";
import { loadConfig } from "../../src/config/load.js";
import { probeHost } from "../../src/resources/budget.js";
import { cli } from "./cli.js";
import { tempDir } from "./specs.js";

export interface ScalingEvent {
  at_s: number;
  component: string;
  from_count: number;
  to_count: number;
  reason: string;
}
export interface Transition {
  worker_id: number;
  transition: string;
  at_ms: number;
}
export interface PlannerPrediction {
  summary: Record<string, number>;
  planner: {
    metadata: { mode: string; advisory: boolean; bootstrap: { status: string; fpm_sha256?: string } };
    scaling_events: ScalingEvent[];
    recommended_scaling_events?: ScalingEvent[];
    lifecycle_operations: { at_ms: number; pool: string; cause: string; transitions: Transition[] }[];
    ticks: { ordinal: number; at_ms: number; runtime_decision: { target_decode: number | null } }[];
    total_ticks: number;
    html_report_path: null;
  } | null;
}

/**
 * The warnings `predict` prints before its run for this config (cli/validate.ts configWarnings),
 * as stderr lines: a seed walkthrough's budget equal to its starting GPUs, for one.
 */
export function configWarningLines(config: string, sets: readonly string[]): string {
  const spec = loadConfig({ configPath: config, sets: [...sets], stack: "dynamo" });
  return configWarnings(spec, probeHost())
    .map((w) => `fleetsim: warning: ${w}\n`)
    .join("");
}

/**
 * Runs predict into a fresh directory; asserts exit 0 and stderr exactly the config's own
 * warnings (`configWarningLines`) followed by `expectedErr` (or what matches it).
 */
export async function predictPlanner(
  config: string,
  sets: readonly string[],
  expectedErr: string | RegExp = "",
): Promise<{ doc: PlannerPrediction; bytes: number; err: string }> {
  const out = join(tempDir(), "out");
  const args = ["predict", "-c", config, "--output-dir", out];
  for (const s of sets) args.push("--set", s);
  const r = await cli(...args);
  const own = configWarningLines(config, sets);
  if (typeof expectedErr === "string") expect(r.err).toBe(own + expectedErr);
  else {
    expect(r.err.startsWith(own)).toBe(true);
    expect(r.err.slice(own.length)).toMatch(expectedErr);
  }
  expect(r.code).toBe(0);
  const text = readFileSync(join(out, "prediction.json"), "utf8");
  return { doc: JSON.parse(text) as PlannerPrediction, bytes: Buffer.byteLength(text), err: r.err };
}

type Planner = NonNullable<PlannerPrediction["planner"]>;

/** Workers the scale-up events added, in all. */
export const addedWorkers = (p: Planner): number =>
  p.scaling_events.filter((e) => e.reason === "scale_up").reduce((a, e) => a + e.to_count - e.from_count, 0);

/** Every lifecycle transition, in record order. */
export const transitions = (p: Planner): Transition[] => p.lifecycle_operations.flatMap((o) => o.transitions);
