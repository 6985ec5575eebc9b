import { HardwareError } from "./errors.js";
import type { GpuSpec } from "./gpu.js";
import gpus from "./gpus.json" with { type: "json" };
import { GPU_VARIANTS, variantSpec } from "./variants.js";

const MEASURED: Readonly<Record<string, GpuSpec>> = gpus as Record<string, GpuSpec>;

/** Measured systems plus the systems derived from them: memory variants and estimated systems (`variants.ts`). */
const CATALOG: Readonly<Record<string, GpuSpec>> = {
  ...MEASURED,
  ...Object.fromEntries(
    Object.entries(GPU_VARIANTS).map(([id, v]) => [id, variantSpec(id, v, MEASURED[v.base])]),
  ),
};

/**
 * Ids of the built-in GPU systems: the measured ones (`src/hardware/gpus.json`, derived by
 * `scripts/calibrate.ts`), their memory variants and the estimated systems (`src/hardware/variants.ts`).
 */
export function knownGpuIds(): string[] {
  return Object.keys(CATALOG).sort();
}

/** The built-in spec of GPU system `id`; an unknown id is a user error (`HardwareError`). */
export function gpuSpec(id: string): GpuSpec {
  const spec = Object.hasOwn(CATALOG, id) ? CATALOG[id] : undefined;
  if (spec === undefined) {
    throw new HardwareError(`unknown GPU '${id}'; known: ${knownGpuIds().join(", ")}`);
  }
  return spec;
}

/** Ids of the systems with measured op tables (no variants). */
export function measuredGpuIds(): string[] {
  return Object.keys(MEASURED).sort();
}

/** The measured system whose op tables `id` uses (itself unless it is derived, `variants.ts`). */
export function tableSystem(id: string): string {
  return Object.hasOwn(GPU_VARIANTS, id) ? GPU_VARIANTS[id].base : id;
}

/**
 * How trustworthy a system's timing data is (docs/perf-tables.md "Derived systems"): `calibrated`
 * for a system with its own measured op tables, `estimated` for one whose tables are another
 * system's rescaled by the roofline (a memory variant, or a chip from its datasheet). `base` is
 * the measured system it is derived from (null when calibrated).
 */
export interface HardwareData {
  readonly gpu: string;
  readonly tier: "calibrated" | "estimated";
  readonly base: string | null;
  /** One line for people: what the timing rests on. */
  readonly basis: string;
}

export function hardwareData(id: string): HardwareData {
  gpuSpec(id); // an unknown id is the user's error
  const v = Object.hasOwn(GPU_VARIANTS, id) ? GPU_VARIANTS[id] : undefined;
  if (v === undefined) return { gpu: id, tier: "calibrated", base: null, basis: "measured op tables" };
  return {
    gpu: id,
    tier: "estimated",
    base: v.base,
    basis:
      v.kind === "memory"
        ? `${v.base}'s measured op tables rescaled to this card's memory by the roofline`
        : `datasheet roofline over ${v.base}'s measured op tables`,
  };
}
