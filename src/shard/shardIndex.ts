/**
 * Which point a shard-index worker runs: `--index I`, or the array index its scheduler gives it —
 * `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job), `SLURM_ARRAY_TASK_ID` (a Slurm job array),
 * `AWS_BATCH_JOB_ARRAY_INDEX` (an AWS Batch array job) — in that order; none: every point.
 */
import { UserError } from "../util/userError.js";

export const INDEX_VARIABLES = [
  "JOB_COMPLETION_INDEX",
  "SLURM_ARRAY_TASK_ID",
  "AWS_BATCH_JOB_ARRAY_INDEX",
] as const;

/** The index is not a point of the plan, or not an index at all (exit 2). */
export class ShardIndexError extends UserError {}

/** The point index and where it came from, or null for every point. */
export function shardIndex(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  points: number,
): { index: number; from: string } | null {
  let text: string | undefined;
  let from = "--index";
  if (flag !== undefined) text = flag;
  else {
    for (const name of INDEX_VARIABLES) {
      const v = env[name];
      if (v !== undefined && v !== "") {
        text = v;
        from = name;
        break;
      }
    }
  }
  if (text === undefined) return null;
  const index = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(index)) {
    throw new ShardIndexError(`${from}=${text}: a point index is a non-negative integer`);
  }
  if (index >= points) {
    throw new ShardIndexError(
      `${from}=${index}: the plan has ${points} point${points === 1 ? "" : "s"} (indices 0 to ${points - 1})` +
        (from === "SLURM_ARRAY_TASK_ID" ? "; submit the array as --array=0-" + (points - 1) : ""),
    );
  }
  return { index, from };
}
