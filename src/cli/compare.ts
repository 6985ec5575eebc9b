import { writeFile } from "node:fs/promises";
import { compareRows, compareRuns, renderCompareTable } from "../report/compare.js";
import { PredictionFileError, readPredictionFile } from "../report/html/readPrediction.js";
import { packageVersion } from "../util/packageRoot.js";
import { UserError } from "../util/userError.js";
import type { Streams } from "./streams.js";

export interface CompareOptions {
  readonly inputs: readonly string[];
  /** Also write the comparison page here. */
  readonly output?: string;
}

/** `fleetsim compare A/prediction.json B/prediction.json …`: the table on stdout, and the page with `-o`. */
export async function compareCommand(opts: CompareOptions, io: Streams): Promise<void> {
  if (opts.inputs.length < 2) throw new UserError("compare needs at least two prediction.json files");
  const note = (line: string): void => io.err(`fleetsim: note: ${line}\n`);
  const runs = compareRuns(opts.inputs.map((path) => ({ path, doc: readPredictionFile(path, note) })));
  const rows = compareRows(runs);
  io.out(`${renderCompareTable(runs, rows)}\n`);
  if (opts.output === undefined) return;
  const { renderComparePage } = await import("../report/html/compare.js");
  const html = renderComparePage(runs, rows, VERSION);
  try {
    await writeFile(opts.output, html);
  } catch (err) {
    throw new PredictionFileError(`cannot write ${opts.output}: ${(err as Error).message}`);
  }
  io.out(`Saved comparison page to: ${opts.output}\n`);
}

const VERSION = packageVersion();
