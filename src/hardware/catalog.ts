import { HardwareError } from "./errors.js";
import type { GpuSpec } from "./gpu.js";
import gpus from "./gpus.json" with { type: "json" };
import { GPU_VARIANTS, variantSpec } from "./variants.js";

const MEASURED: Readonly<Record<string, GpuSpec>> = gpus as Record<string, GpuSpec>;

/** Measured systems plus their memory variants (`variants.ts`). */
const CATALOG: Readonly<Record<string, GpuSpec>> = {
  ...MEASURED,
  ...Object.fromEntries(
    Object.entries(GPU_VARIANTS).map(([id, v]) => [id, variantSpec(id, v, MEASURED[v.base])]),
  ),
};

/**
 * Ids of the built-in GPU systems: the measured ones (`src/hardware/gpus.json`, derived by
 * `scripts/calibrate.ts`) and their memory variants (`src/hardware/variants.ts`).
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

/** The measured system whose op tables `id` uses (itself unless it is a variant). */
export function tableSystem(id: string): string {
  return Object.hasOwn(GPU_VARIANTS, id) ? GPU_VARIANTS[id].base : id;
}
