/**
 * `fleetsim calibrate -c DEPLOYMENT.yaml --results FILE… -o PROFILE.yaml` (docs/calibrate.md): fit
 * a calibration profile to a benchmark's results and write it; `client.profile` applies it.
 */
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import { stringify } from "yaml";
import { calibrate } from "../calibrate/calibrate.js";
import { loadConfig } from "../config/load.js";
import type { Stack } from "../config/runSpec.js";
import { formatNumber } from "../report/formatNumber.js";
import { UserError } from "../util/userError.js";
import type { Streams } from "./streams.js";

export interface CalibrateOptions {
  readonly config: string;
  readonly set: readonly string[];
  readonly stack: Stack;
  readonly results: readonly string[];
  readonly output: string;
  readonly name?: string;
  readonly overwrite: boolean;
}

export async function calibrateCommand(opts: CalibrateOptions, io: Streams): Promise<void> {
  if (existsSync(opts.output) && !opts.overwrite) {
    throw new UserError(`${opts.output} exists: pass --overwrite to replace it`);
  }
  const spec = loadConfig({ configPath: opts.config, sets: [...opts.set], stack: opts.stack });
  const name = opts.name ?? basename(opts.output, extname(opts.output));
  const outcome = await calibrate(spec, opts.results, name);
  const c = outcome.profile.client.overhead.request_ms;
  const text =
    "# fleetsim calibration profile (docs/calibrate.md): apply it with `client: {profile: <this file>}`\n" +
    stringify(outcome.profile);
  try {
    await writeFile(opts.output, text);
  } catch (err) {
    throw new UserError(`cannot write ${opts.output}: ${(err as Error).message}`);
  }
  const e = outcome.engineSide;
  const f = (x: number | null) => (x === null ? "N/A" : formatNumber(x));
  const lines = [
    `Engine-side replay of ${opts.config}: TTFT ${f(e.ttftMeanMs)} ms, ITL ${f(e.itlMeanMs)} ms, ` +
      `E2E ${f(e.e2eMeanMs)} ms (means, ${e.completed} requests)`,
  ];
  for (const m of outcome.measured) {
    const r = m.means;
    lines.push(
      `${m.file} (${r.format}): TTFT ${f(r.ttftMeanMs)} ms (calibrated ${f(e.ttftMeanMs + c)}), ` +
        `ITL ${f(r.itlMeanMs)} ms, E2E ${f(r.e2eMeanMs)} ms (calibrated ${f(e.e2eMeanMs + c)})`,
    );
  }
  lines.push(`Client overhead: ${f(c)} ms per request`);
  lines.push(`Saved calibration profile '${name}' to: ${opts.output}`);
  io.out(`${lines.join("\n")}\n`);
}
