/**
 * `execution:` — host-resource limits of the reference's supervisor (docs/resources.md);
 * validated for compatibility, no effect on results. The resolved `ResourceSettings` are these
 * keys in camelCase (config/runSpec.ts), so a key is written here only.
 */
import * as z from "zod";
import { fraction, nonNegNum, positiveOr, posNum } from "./primitives.js";

const Resources = z.strictObject({
  /** Decimal GB, or `auto` (a share of the host's available memory). */
  memory_limit_gb: positiveOr("number", "auto").default("auto"),
  /** CPUs, or `auto` (host CPUs minus one, at least one). */
  cpu_limit: positiveOr("integer", "auto").default("auto"),
  reserve_memory_gb: nonNegNum().default(1.0),
  reserve_memory_fraction: z.number().min(0).lt(1).default(0.0),
  available_memory_fraction: fraction().default(0.9),
  initialization_timeout_seconds: posNum().default(60.0),
  shutdown_timeout_seconds: posNum().default(5.0),
});

export type ResourcesConfig = z.output<typeof Resources>;

export const Execution = z.strictObject({ resources: Resources.prefault({}) });
