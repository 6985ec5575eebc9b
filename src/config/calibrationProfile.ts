/**
 * A calibration profile (docs/calibrate.md): what `fleetsim calibrate` fitted on a user's own
 * benchmark results, applied to a run by `client.profile`. It holds the parameters the fidelity
 * benchmark fits (docs/fidelity.md "Calibration runs"): today the client's fixed overhead. A run
 * names the profile in `run.client.profile` and in its fleet block.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import * as z from "zod";
import { MAX_CLIENT_OVERHEAD_MS } from "./schema/client.js";

/** The format version a profile file declares (`calibration_profile`). */
export const PROFILE_FORMAT = 1;

const Measured = z.strictObject({
  ttft_mean_ms: z.number(),
  itl_mean_ms: z.number().nullable(),
  e2e_mean_ms: z.number().nullable(),
  completed: z.number().nullable(),
});

export const CalibrationProfileSchema = z.strictObject({
  calibration_profile: z.literal(PROFILE_FORMAT),
  name: z.string().min(1),
  /** What it was fitted on: each results file, its format, what it measured and what the replay predicted engine-side. */
  fitted_on: z
    .array(
      z.strictObject({
        file: z.string(),
        format: z.enum(["vllm-bench-serve", "aiperf", "inference-perf"]),
        measured: Measured,
        engine_side: Measured,
      }),
    )
    .min(1),
  client: z.strictObject({
    overhead: z.strictObject({ request_ms: z.number().min(0).max(MAX_CLIENT_OVERHEAD_MS) }),
  }),
});
export type CalibrationProfile = z.infer<typeof CalibrationProfileSchema>;

/** A profile read from `path`, or the reason it cannot be used (the caller reports it at its config path). */
export function readCalibrationProfile(
  path: string,
):
  | { readonly ok: true; readonly profile: CalibrationProfile }
  | { readonly ok: false; readonly why: string } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return { ok: false, why: `calibration profile not found: ${path}` };
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    return {
      ok: false,
      why: `calibration profile ${path} is not YAML: ${(err as Error).message.split("\n")[0]}`,
    };
  }
  const r = CalibrationProfileSchema.safeParse(doc);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const at = issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
    return { ok: false, why: `calibration profile ${path}${at}: ${issue.message}` };
  }
  return { ok: true, profile: r.data };
}
