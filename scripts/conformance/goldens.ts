/**
 * Golden fixtures of the reference (docs/conformance.md "Golden fixtures"): what the harness keeps
 * of a reference run of a `golden` case, small enough to commit, and the tolerances within which
 * `npm test` (test/conformance/reference.goldens.test.ts) holds fleetsim to it without Python.
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { NON_NUMERIC_SUMMARY_KEYS } from "../../src/output/summary.js";
import type { ConformanceCase, TraceName } from "./cases.js";
import {
  DEFAULT_TOLERANCE,
  HOST_TIME_KEYS,
  type PerRequestReport,
  requestRecords,
  type ScalingEvent,
  scalingEvents,
  summaryOf,
} from "./compare.js";

export const REFERENCE_GOLDEN_DIR = join(
  resolve(fileURLToPath(import.meta.url), "..", "..", ".."),
  "test",
  "golden",
  "reference",
);

/**
 * The largest |relative difference| of a request's TTFT or E2E that counts as equal: float
 * rounding (the reference evaluates the polynomial timing in another order: 1.3e-6 at most on
 * `timing-polynomial`), not a scheduling or pricing difference.
 */
export const EXACT = 1e-5;

/** Per-request records are kept for runs of at most this many requests. */
const MAX_REQUESTS = 400;

/**
 * The tolerance a golden holds fleetsim to on one metric, from the difference the harness measured
 * when it wrote the golden: the default 2 % where fleetsim agrees, else the measured difference
 * rounded up to the next 5 points, so that the test fails when a divergence grows but does not
 * pretend that an open one is closed. Every widened metric is listed in the golden file
 * (`widened`) and its cause in docs/conformance.md "Known differences"; closing a gap narrows it
 * on the next `npm run conformance -- --goldens`.
 */
export function toleranceFor(measuredDiff: number | null): number {
  if (measuredDiff === null || !Number.isFinite(measuredDiff)) return DEFAULT_TOLERANCE;
  const abs = Math.abs(measuredDiff);
  if (abs <= DEFAULT_TOLERANCE) return DEFAULT_TOLERANCE;
  return Math.ceil((abs + 1e-12) * 20) / 20;
}

export interface GoldenFile {
  readonly case: string;
  readonly about: string;
  readonly stack: "engine" | "dynamo";
  /** The YAML both tools ran; its trace is named by `trace` (a repository file). */
  readonly config: string;
  readonly trace: TraceName | null;
  /** The reference's numeric summary metrics (host-time keys left out). */
  readonly summary: Record<string, number>;
  /**
   * The reference's summary values that are not numbers (provenance, eviction policy, power), which
   * fleetsim must write equal. With the Dynamo stack the reference's runner reports neither its
   * timing provenance nor power coverage (docs/conformance.md "Known differences"): those two are
   * left out there.
   */
  readonly nonNumeric?: Record<string, unknown>;
  /** Identity (compare.ts requestRecords), TTFT and E2E of each completed request, in the reference's order. */
  readonly requests: Array<[string, number, number]> | null;
  readonly scalingEvents: ScalingEvent[] | null;
  /**
   * With the Planner: the reference's tick records as a key schema and decisions (absent in older
   * goldens): fleetsim's must have as many ticks, each with the same keys at every level the
   * reference writes (`plannerTickShape`), and the same `effects.scale_to` at every tick.
   */
  readonly plannerTicks?: PlannerTickGolden;
  /** Request by request: the median |relative difference| of TTFT and E2E allowed (toleranceFor). */
  readonly requestBands?: { readonly ttftMedian: number; readonly e2eMedian: number };
  /**
   * The same bands with fleetsim under the reference's conventions (absent in older goldens), and
   * whether every request's TTFT and E2E then equals the reference's (to 1e-9, relative).
   */
  readonly conventionsRequestBands?: {
    readonly ttftMedian: number;
    readonly e2eMedian: number;
    readonly exact: boolean;
  };
  /**
   * Summary keys of the reference that fleetsim did not write when the golden was made
   * (docs/conformance.md "Known differences"): the test accepts their absence, and only theirs.
   */
  readonly absentInFleetsim: string[];
  /** metric → relative tolerance, for the metrics fleetsim did not match within `defaultTolerance` (toleranceFor). */
  readonly widened: Record<string, number>;
  /**
   * The same tolerances for fleetsim under the reference's conventions (docs/conformance.md
   * "Reproducing the reference's numbers"): what is left when Known differences 2, 3, 8 and 9 are
   * switched off. Absent in goldens written before the harness ran that comparison.
   */
  readonly conventionsWidened?: Record<string, number>;
  /**
   * With the Planner: fleetsim under the reference's conventions made the reference's scaling
   * events (the same decisions at the same times) when the golden was written; `npm test` then
   * requires it to go on doing so. Absent in older goldens.
   */
  readonly conventionsSameScaling?: boolean;
  readonly defaultTolerance: number;
  /** The reference's versions (filled in by the harness). */
  readonly reference?: Record<string, string>;
}

/**
 * Twelve significant digits: the reference's sums differ in their last bits from run to run, and
 * a golden should change only when a figure does (the tolerances are ≥ 2 %).
 */
/**
 * The reference's non-numeric summary keys (an engine-stack document is flat: its other
 * top-level keys, diagnostics and `per_request`, are not summary keys).
 */
const REFERENCE_NON_NUMERIC: ReadonlySet<string> = new Set(NON_NUMERIC_SUMMARY_KEYS);
/** Summary keys the reference's Dynamo-stack runner does not report (null or `unavailable`). */
const DYNAMO_RUNNER_UNREPORTED: ReadonlySet<string> = new Set([
  "prediction_provenance",
  "power_coverage",
  "kv_cache_precision",
]);

export function goldenNumber(v: number): number {
  return Number(v.toPrecision(12));
}

export function goldenOf(
  c: ConformanceCase,
  prediction: Record<string, unknown>,
  requests: Record<string, unknown>[] | null,
  measured: ReadonlyArray<{ key: string; diff: number | null; fleetsim: number | null }>,
  perRequest: PerRequestReport | null,
  conventions: ReadonlyArray<{ key: string; diff: number | null }> = [],
  conventionsPerRequest: PerRequestReport | null = null,
  conventionsSameScaling: boolean | null = null,
): GoldenFile {
  const summary: Record<string, number> = {};
  for (const [k, v] of Object.entries(summaryOf(prediction)))
    if (typeof v === "number" && Number.isFinite(v) && !HOST_TIME_KEYS.has(k)) summary[k] = goldenNumber(v);
  const nonNumeric: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(summaryOf(prediction)))
    if (
      typeof v !== "number" &&
      REFERENCE_NON_NUMERIC.has(k) &&
      !(c.stack === "dynamo" && DYNAMO_RUNNER_UNREPORTED.has(k))
    )
      nonNumeric[k] = v;
  const kept =
    requests !== null && requests.length <= MAX_REQUESTS
      ? requestRecords(requests)
          .filter((r) => r.ttft !== null && r.e2e !== null)
          .map((r): [string, number, number] => [r.uuid, goldenNumber(r.ttft!), goldenNumber(r.e2e!)])
      : null;
  const planner = prediction["planner"] as Record<string, unknown> | null | undefined;
  return {
    case: c.id,
    about: c.about,
    stack: c.stack,
    config: typeof c.config === "string" ? c.config : stringify(c.config),
    trace: c.trace ?? null,
    summary,
    nonNumeric,
    requests: kept,
    scalingEvents: planner === null || planner === undefined ? null : scalingEvents(planner),
    ...(plannerTicksOf(planner) !== undefined ? { plannerTicks: plannerTicksOf(planner) } : {}),
    ...(kept !== null && perRequest !== null
      ? {
          requestBands: {
            ttftMedian: toleranceFor(perRequest.ttft.medianAbs),
            e2eMedian: toleranceFor(perRequest.e2e.medianAbs),
          },
        }
      : {}),
    ...(kept !== null && conventionsPerRequest !== null
      ? {
          conventionsRequestBands: {
            ttftMedian: toleranceFor(conventionsPerRequest.ttft.medianAbs),
            e2eMedian: toleranceFor(conventionsPerRequest.e2e.medianAbs),
            exact:
              conventionsPerRequest.onlyReference === 0 &&
              conventionsPerRequest.ttft.maxAbs <= EXACT &&
              conventionsPerRequest.e2e.maxAbs <= EXACT,
          },
        }
      : {}),
    absentInFleetsim: measured.filter((m) => m.key in summary && m.fleetsim === null).map((m) => m.key),
    widened: widenedOf(measured, summary),
    ...(conventions.length > 0 ? { conventionsWidened: widenedOf(conventions, summary) } : {}),
    ...(conventionsSameScaling !== null ? { conventionsSameScaling } : {}),
    defaultTolerance: DEFAULT_TOLERANCE,
  };
}

/** What a golden keeps of a Planner run's ticks. */
export interface PlannerTickGolden {
  readonly count: number;
  /** Dotted paths of every object key of a tick record (`plannerTickShape`), the union over ticks. */
  readonly keys: string[];
  /** Each tick's `effects.scale_to` (null when it decided nothing). */
  readonly scaleTo: Array<Record<string, unknown> | null>;
}

/**
 * The key schema of tick records: the dotted path of every key of every object inside them, down
 * to the leaves (array elements are one level, `[]`), sorted and without repeats. Values are left
 * out: the schema is what a script reading the file relies on.
 */
export function plannerTickShape(ticks: readonly unknown[]): string[] {
  const out = new Set<string>();
  const walk = (v: unknown, path: string): void => {
    if (Array.isArray(v)) {
      for (const e of v) walk(e, `${path}[]`);
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        const at = path === "" ? k : `${path}.${k}`;
        out.add(at);
        walk(x, at);
      }
    }
  };
  for (const t of ticks) walk(t, "");
  return [...out].sort();
}

/** The golden part of a Planner run's ticks, or undefined without a Planner or ticks. */
export function plannerTicksOf(
  planner: Record<string, unknown> | null | undefined,
): PlannerTickGolden | undefined {
  const ticks = planner?.["ticks"];
  if (!Array.isArray(ticks) || ticks.length === 0) return undefined;
  return {
    count: ticks.length,
    keys: plannerTickShape(ticks),
    scaleTo: ticks.map((t) => {
      const effects = (t as { effects?: { scale_to?: Record<string, unknown> | null } }).effects;
      return effects?.scale_to ?? null;
    }),
  };
}

/** metric → tolerance, for the golden's metrics that were measured outside the default. */
function widenedOf(
  measured: ReadonlyArray<{ key: string; diff: number | null }>,
  summary: Record<string, number>,
): Record<string, number> {
  return Object.fromEntries(
    measured
      .filter((m) => m.key in summary && toleranceFor(m.diff) > DEFAULT_TOLERANCE)
      .map((m) => [m.key, toleranceFor(m.diff)]),
  );
}
