/**
 * `cost:` (a fleetsim extension; docs/cost.md): the price of one GPU-hour per GPU system, in US
 * dollars, over the defaults of `hardware/prices.ts`. The reference has no such section. One key
 * per built-in GPU system, so a misspelt system is an unknown key with a did-you-mean hint.
 */
import * as z from "zod";
import { knownGpuIds } from "../../hardware/catalog.js";
import { posNum } from "./primitives.js";

const prices = Object.fromEntries(knownGpuIds().map((id) => [id, posNum().optional()])) as Record<
  string,
  z.ZodOptional<z.ZodNumber>
>;

export const Cost = z.strictObject({
  usd_per_gpu_hour: z.strictObject(prices).prefault({}),
});

export type CostConfig = z.output<typeof Cost>;
