/**
 * A point's result file, `results/<point-hash>.json` (docs/sweep.md "Results"): the prediction
 * document of the point's run without its host-time keys, and the warnings it printed — a
 * deterministic function of the point, so any executor, any rerun and any duplicate worker writes
 * the same bytes.
 *
 * Publishing is atomic and first-writer-wins: the file is written in full and fsynced under a
 * temporary name in the same folder, then hard-linked to its final name, which fails if a result
 * is already there (kept; the temporary is dropped). A file system without hard links gets a
 * rename instead, after the same check. A killed worker leaves at most a temporary, which no
 * reader takes for a result.
 */
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import * as z from "zod";
import { HOST_TIME_KEYS } from "../output/summary.js";
import { stableStringify } from "../report/json.js";
import { writeFully } from "../report/outputDir.js";
import type { Prediction } from "../report/prediction.js";
import { readTextFile } from "../util/fsRead.js";

export const RESULT_SCHEMA = "fleetsim.sweep-result.v1";

export const resultSchema = z.strictObject({
  schema: z.literal(RESULT_SCHEMA),
  point_hash: z.string(),
  fleetsim_version: z.string(),
  /** prediction.json of the point's run without the host-time keys (docs/metrics.md). */
  prediction: z.record(z.string(), z.unknown()),
  warnings: z.array(z.string()),
});

export type PointResult = z.infer<typeof resultSchema>;

export function resultName(hash: string): string {
  return `${hash}.json`;
}

export function resultPath(dir: string, hash: string): string {
  return join(dir, "results", resultName(hash));
}

/** The prediction with every host-dependent value taken out: summary timings, retune sweep wall times. */
export function deterministicPrediction(prediction: Prediction): Record<string, unknown> {
  const doc = structuredClone(prediction) as unknown as Record<string, unknown>;
  const summary = doc["summary"] as Record<string, unknown>;
  for (const key of HOST_TIME_KEYS) {
    delete summary[key];
    // The engine stack's top-level copy (docs/output.md "Layout").
    delete doc[key];
  }
  const planner = doc["planner"] as { retune_events?: { sweep_wall_s: number | null }[] } | undefined;
  for (const e of planner?.retune_events ?? []) e.sweep_wall_s = null;
  return doc;
}

export function resultDocument(
  hash: string,
  version: string,
  prediction: Prediction,
  warnings: readonly string[],
): PointResult {
  return {
    schema: RESULT_SCHEMA,
    point_hash: hash,
    fleetsim_version: version,
    prediction: deterministicPrediction(prediction),
    warnings: [...warnings],
  };
}

/** What publishing found: this process wrote the result, or one was already there. */
export type PublishOutcome = "written" | "kept";

/** Temporaries this process made (their names must differ within it). */
let published = 0;

/** Publishes `result` at `dir/results/<hash>.json` unless a result is there (docs above). */
export function publishResult(dir: string, result: PointResult): PublishOutcome {
  const final = resultPath(dir, result.point_hash);
  if (existsSync(final)) return "kept";
  mkdirSync(dirname(final), { recursive: true });
  // `.` first, `.tmp` last: never a `<hash>.json` name, so a reader cannot mistake it.
  const tmp = join(dir, "results", `.${result.point_hash}.${process.pid}.${++published}.tmp`);
  const fd = openSync(tmp, "wx");
  try {
    try {
      writeFully(fd, Buffer.from(`${stableStringify(result)}\n`, "utf8"));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, final);
      return "written";
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST") return "kept";
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw err;
      // No hard links here (some network and object-store mounts): the rename is atomic too; a
      // result that appeared meanwhile is the same bytes.
      if (existsSync(final)) return "kept";
      renameSync(tmp, final);
      return "written";
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** A result file as merge reads it: its document, or why it is not one. */
export type ReadResult =
  | { readonly ok: true; readonly result: PointResult }
  | { readonly ok: false; readonly missing: true }
  | { readonly ok: false; readonly missing: false; readonly problem: string };

export function readResult(dir: string, hash: string): ReadResult {
  const path = resultPath(dir, hash);
  const text = readTextFile(path);
  if (typeof text !== "string") {
    return text.code === "ENOENT"
      ? { ok: false, missing: true }
      : { ok: false, missing: false, problem: text.message };
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, missing: false, problem: "not valid JSON (cut short?)" };
  }
  const parsed = resultSchema.safeParse(doc);
  if (!parsed.success) return { ok: false, missing: false, problem: `not a ${RESULT_SCHEMA} document` };
  if (parsed.data.point_hash !== hash) {
    return { ok: false, missing: false, problem: `it holds point ${parsed.data.point_hash}'s result` };
  }
  return { ok: true, result: parsed.data };
}
