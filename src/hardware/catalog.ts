import { HardwareError } from "./errors.js";
import type { GpuSpec } from "./gpu.js";
import gpus from "./gpus.json" with { type: "json" };

const CATALOG: Readonly<Record<string, GpuSpec>> = gpus as Record<string, GpuSpec>;

/** Ids of the built-in GPU systems (`src/hardware/gpus.json`, derived by `scripts/calibrate.ts`). */
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
