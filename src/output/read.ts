/**
 * Reading a prediction.json that may not be fleetsim's current output (docs/output.md "Reading"):
 * `predictionFileSchema` is what identifies a prediction (an object with a `summary` object);
 * `predictionReadSchema` is the strict contract made tolerant (src/output/tolerant.ts), so the
 * HTML report draws what an older or foreign file has and leaves out what it lacks. The summary
 * is read as every finite number it holds, whatever its keys (foreign files have their own).
 */
import * as z from "zod";
import { type Prediction, predictionSchema } from "./prediction.js";
import { type Tolerant, tolerantShape } from "./tolerant.js";

/** The least a document must be to be read as a prediction. */
export const predictionFileSchema = z.looseObject({ summary: z.looseObject({}) });

/** Every finite number of a summary object, by key. */
const readSummarySchema = z.record(z.string(), z.unknown()).transform((r) => {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(r)) if (typeof v === "number" && Number.isFinite(v)) out[k] = v;
  return out;
});

/** A prediction as the report reads it: every part optional, parts that do not read left out. */
export type ReadPrediction = Tolerant<Omit<Prediction, "summary">> & { summary?: Record<string, number> };

let readSchema: z.ZodType<ReadPrediction> | null = null;

/**
 * The tolerant read schema, built on first use: deriving it walks the whole output contract
 * (hundreds of zod schemas), which `predict` — it only writes — should not pay at start-up
 * (docs/performance.md "Start-up").
 */
export function predictionReadSchema(): z.ZodType<ReadPrediction> {
  readSchema ??= z
    .object({
      ...tolerantShape(predictionSchema.shape),
      summary: readSummarySchema.optional().catch(undefined),
    })
    .catch({}) as unknown as z.ZodType<ReadPrediction>;
  return readSchema;
}
