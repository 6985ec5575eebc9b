import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import {
  type ConvertOptions,
  convertMooncakeToDynamo,
  DEFAULT_ORIGIN_UNIX_MS,
} from "../traffic/dynamo/convert.js";
import { UserError } from "../util/userError.js";
import type { Streams } from "./streams.js";

export { DEFAULT_CONVERT_BLOCK_SIZE, DEFAULT_ORIGIN_UNIX_MS } from "../traffic/dynamo/convert.js";

/** A flag combination `fleetsim convert` cannot run with (exit 2). */
export class ConvertUsageError extends UserError {}

export interface ConvertCommandOptions {
  readonly input: string;
  readonly output?: string;
  readonly traceBlockSize: number;
  readonly splitAtSeconds?: number;
  readonly history?: string;
  readonly replay?: string;
  readonly startUnixMs?: number;
  readonly requestIdPrefix?: string;
}

/**
 * `fleetsim convert`: a Mooncake trace → a Dynamo request trace (or history + replay files).
 * Flag combinations are checked before anything is read; trace errors propagate as TraceError.
 */
export async function convertCommand(opts: ConvertCommandOptions, io: Streams): Promise<void> {
  const dest = target(opts);
  // Writing over the input would destroy it (the output replaces its path when complete).
  for (const path of "output" in dest ? [dest.output] : [dest.history, dest.replay]) {
    if (sameFile(path, opts.input)) {
      throw new ConvertUsageError(`the output ${path} is the input file; choose another output path`);
    }
  }
  const result = await convertMooncakeToDynamo({
    input: opts.input,
    traceBlockSize: opts.traceBlockSize,
    originUnixMs: opts.startUnixMs ?? DEFAULT_ORIGIN_UNIX_MS,
    requestIdPrefix: opts.requestIdPrefix,
    target: dest,
  });
  for (const f of result.files) io.out(`Wrote ${f.requests} requests to ${f.path}\n`);
  if (result.derivedArrivals > 0) {
    io.err(
      `fleetsim: note: ${result.derivedArrivals} later session turns had no timestamp; ` +
        "each arrives at its previous turn's arrival + delay (a Dynamo trace is open-loop)\n",
    );
  }
  if (result.adjustedRows > 0) {
    io.err(
      `fleetsim: note: ${result.adjustedRows} rows had input_length and hash_ids that disagree; ` +
        "written as the Mooncake loader reads them (length clamped to the hash capacity, extra hash ids dropped)\n",
    );
  }
}

function target(opts: ConvertCommandOptions): ConvertOptions["target"] {
  const splitFlags = [opts.splitAtSeconds, opts.history, opts.replay];
  if (splitFlags.every((v) => v === undefined)) {
    if (opts.output === undefined) {
      throw new ConvertUsageError(
        "convert needs --output, or --split-at-seconds with --history and --replay",
      );
    }
    return { output: opts.output };
  }
  if (opts.output !== undefined) {
    throw new ConvertUsageError("--output cannot be combined with --split-at-seconds, --history or --replay");
  }
  if (opts.splitAtSeconds === undefined || opts.history === undefined || opts.replay === undefined) {
    throw new ConvertUsageError("--split-at-seconds, --history and --replay go together");
  }
  if (resolve(opts.history) === resolve(opts.replay))
    throw new ConvertUsageError("--history and --replay must be different files");
  return { splitAtMs: opts.splitAtSeconds * 1000, history: opts.history, replay: opts.replay };
}

/** Whether two paths name the same file (symlinks and relative paths resolved; absent = by path). */
function sameFile(a: string, b: string): boolean {
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return real(a) === real(b);
}
