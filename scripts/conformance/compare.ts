/**
 * Key-by-key comparison of a reference `prediction.json` with fleetsim's (docs/conformance.md).
 * Pure functions over parsed documents: the harness (scripts/conformance/run.ts) and the golden
 * test (test/conformance/reference.goldens.test.ts) share them.
 */

/** Host-time keys: how fast the simulator ran, not what it predicts (never compared). */
export const HOST_TIME_KEYS: ReadonlySet<string> = new Set([
  "wall_time_ms",
  "processed_tokens_per_s",
  "processed_output_tokens_per_s",
]);

/** The reference's engine stack writes its summary flat at the top level beside these keys. */
const FLAT_NON_SUMMARY_KEYS: ReadonlySet<string> = new Set([
  "per_request",
  "power_diagnostics",
  "memory_diagnostics",
  "details",
  "coverage",
  "planner",
  "metadata",
]);

/** The default tolerance of the harness: a metric agrees when within 2 % of the reference. */
export const DEFAULT_TOLERANCE = 0.02;

type Json = Record<string, unknown>;

/** The summary object of either shape (`native.get("summary", native)`, as aisimulate's main.py reads it). */
export function summaryOf(doc: Json): Json {
  if (typeof doc["summary"] === "object" && doc["summary"] !== null) return doc["summary"] as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(doc)) if (!FLAT_NON_SUMMARY_KEYS.has(k)) out[k] = v;
  return out;
}

/** Relative difference of fleetsim from the reference; 0 when both are 0. */
export function relDiff(reference: number, fleetsim: number): number {
  if (reference === fleetsim) return 0;
  if (reference === 0) return Number.POSITIVE_INFINITY * Math.sign(fleetsim);
  return (fleetsim - reference) / Math.abs(reference);
}

export function within(reference: number, fleetsim: number, tolerance: number): boolean {
  return Math.abs(fleetsim - reference) <= tolerance * Math.abs(reference) + 1e-9;
}

export interface MetricRow {
  readonly key: string;
  readonly reference: number | null;
  readonly fleetsim: number | null;
  /** (fleetsim − reference) / |reference|, null when either side has no number. */
  readonly diff: number | null;
  readonly ok: boolean;
}

function numberOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/**
 * Every numeric summary key of the reference but the host-time ones, sorted: each is within the
 * tolerance or a divergence (a key fleetsim lacks is one). Keys only fleetsim writes are its
 * extensions (docs/conformance.md, Known differences 7), listed by the key report, not compared.
 */
export function compareSummaries(
  reference: Json,
  fleetsim: Json,
  tolerance = DEFAULT_TOLERANCE,
): MetricRow[] {
  const keys = new Set<string>();
  for (const [k, v] of Object.entries(reference))
    if (typeof v === "number" && !HOST_TIME_KEYS.has(k)) keys.add(k);
  return [...keys].sort().map((key) => {
    const r = numberOrNull(reference[key]);
    const f = numberOrNull(fleetsim[key]);
    const diff = r !== null && f !== null ? relDiff(r, f) : null;
    return { key, reference: r, fleetsim: f, diff, ok: r !== null && f !== null && within(r, f, tolerance) };
  });
}

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

export interface KeyReport {
  readonly onlyReference: string[];
  readonly onlyFleetsim: string[];
  /** `key: reference type ≠ fleetsim type` (a null on one side is a type difference too). */
  readonly typeMismatches: string[];
}

/** Key sets and value types of two objects, one level deep. */
export function compareKeys(
  reference: Json,
  fleetsim: Json,
  ignore: ReadonlySet<string> = new Set(),
): KeyReport {
  const onlyReference: string[] = [];
  const onlyFleetsim: string[] = [];
  const typeMismatches: string[] = [];
  for (const k of Object.keys(reference).sort()) {
    if (ignore.has(k)) continue;
    if (!(k in fleetsim)) onlyReference.push(k);
    else if (typeName(reference[k]) !== typeName(fleetsim[k]))
      typeMismatches.push(`${k}: ${typeName(reference[k])} ≠ ${typeName(fleetsim[k])}`);
  }
  for (const k of Object.keys(fleetsim).sort()) if (!ignore.has(k) && !(k in reference)) onlyFleetsim.push(k);
  return { onlyReference, onlyFleetsim, typeMismatches };
}

export interface RequestRecord {
  readonly uuid: string;
  readonly ttft: number | null;
  readonly e2e: number | null;
}

/**
 * A request's identity on both sides: its input and output lengths and which of the requests
 * with the same two it is, in arrival order. The reference draws each request's `uuid` at random
 * (uuid4), and a session's later turn arrives when its previous turn ends, so neither the uuid
 * nor the arrival time matches between the tools.
 */
export function requestRecords(lines: readonly Json[]): RequestRecord[] {
  const seen = new Map<string, number>();
  const ordered = [...lines].sort((a, b) => Number(a["arrival_time_ms"]) - Number(b["arrival_time_ms"]));
  return ordered.map((r) => {
    const base = `${String(r["input_length"])}|${String(r["output_length"])}`;
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    return {
      uuid: `${base}#${k}`,
      ttft: numberOrNull(r["ttft_ms"]),
      e2e: numberOrNull(r["e2e_latency_ms"]),
    };
  });
}

export interface Spread {
  readonly count: number;
  readonly medianAbs: number;
  readonly p90Abs: number;
  readonly maxAbs: number;
  /** Share of requests whose value is within the tolerance of the reference's. */
  readonly withinShare: number;
}

export interface PerRequestReport {
  readonly matched: number;
  readonly onlyReference: number;
  readonly onlyFleetsim: number;
  readonly ttft: Spread;
  readonly e2e: Spread;
}

function spread(diffs: number[], tolerance: number): Spread {
  const abs = diffs.map(Math.abs).sort((a, b) => a - b);
  const at = (q: number) =>
    abs.length === 0 ? 0 : abs[Math.min(abs.length - 1, Math.round(q * (abs.length - 1)))]!;
  return {
    count: abs.length,
    medianAbs: at(0.5),
    p90Abs: at(0.9),
    maxAbs: abs.length === 0 ? 0 : abs[abs.length - 1]!,
    withinShare: abs.length === 0 ? 1 : abs.filter((d) => d <= tolerance).length / abs.length,
  };
}

/** Request by request, matched by `requestRecords`' identity. */
export function comparePerRequest(
  reference: readonly RequestRecord[],
  fleetsim: readonly RequestRecord[],
  tolerance = DEFAULT_TOLERANCE,
): PerRequestReport {
  const byUuid = new Map(fleetsim.map((r) => [r.uuid, r]));
  const ttft: number[] = [];
  const e2e: number[] = [];
  let matched = 0;
  for (const r of reference) {
    const f = byUuid.get(r.uuid);
    if (f === undefined) continue;
    matched++;
    if (r.ttft !== null && f.ttft !== null) ttft.push(relDiff(r.ttft, f.ttft));
    if (r.e2e !== null && f.e2e !== null) e2e.push(relDiff(r.e2e, f.e2e));
  }
  return {
    matched,
    onlyReference: reference.length - matched,
    onlyFleetsim: fleetsim.length - matched,
    ttft: spread(ttft, tolerance),
    e2e: spread(e2e, tolerance),
  };
}

/** One scaling decision as both tools report it. */
export interface ScalingEvent {
  readonly atS: number;
  readonly component: string;
  readonly from: number;
  readonly to: number;
}

export function scalingEvents(planner: Json | null | undefined): ScalingEvent[] {
  const events = (planner?.["scaling_events"] ?? []) as Json[];
  return events.map((e) => ({
    atS: Number(e["at_s"]),
    component: String(e["component"]),
    from: Number(e["from_count"]),
    to: Number(e["to_count"]),
  }));
}

export interface PlannerReport {
  readonly referenceEvents: number;
  readonly fleetsimEvents: number;
  /** The two event lists are the same decisions at the same times. */
  readonly sameEvents: boolean;
  /** Index of the first event that differs (or the shorter list's length), null when the same. */
  readonly firstDifference: number | null;
  readonly referenceTicks: number;
  readonly fleetsimTicks: number;
  readonly referenceLifecycle: number;
  readonly fleetsimLifecycle: number;
  readonly referenceRetune: number;
  readonly fleetsimRetune: number;
  readonly referenceRecommended: number;
  readonly fleetsimRecommended: number;
}

function length(v: unknown): number {
  return Array.isArray(v) ? v.length : 0;
}

export function comparePlanners(
  reference: Json | null | undefined,
  fleetsim: Json | null | undefined,
): PlannerReport {
  const r = scalingEvents(reference);
  const f = scalingEvents(fleetsim);
  let firstDifference: number | null = null;
  for (let i = 0; i < Math.max(r.length, f.length); i++) {
    const a = r[i];
    const b = f[i];
    if (
      a === undefined ||
      b === undefined ||
      a.atS !== b.atS ||
      a.component !== b.component ||
      a.from !== b.from ||
      a.to !== b.to
    ) {
      firstDifference = i;
      break;
    }
  }
  return {
    referenceEvents: r.length,
    fleetsimEvents: f.length,
    sameEvents: firstDifference === null,
    firstDifference,
    referenceTicks: Number(reference?.["total_ticks"] ?? 0),
    fleetsimTicks: Number(fleetsim?.["total_ticks"] ?? 0),
    referenceLifecycle: length(reference?.["lifecycle_operations"]),
    fleetsimLifecycle: length(fleetsim?.["lifecycle_operations"]),
    referenceRetune: length(reference?.["retune_events"]),
    fleetsimRetune: length(fleetsim?.["retune_events"]),
    referenceRecommended: length(reference?.["recommended_scaling_events"]),
    fleetsimRecommended: length(fleetsim?.["recommended_scaling_events"]),
  };
}
