/**
 * The command line the scripts that derive tables from AIConfigurator's published perf data share:
 * `--aic <ai-dynamo/aiconfigurator git dir> [--ref HEAD] [--out src/hardware]`. The git dir may be a
 * bare mirror or a checkout: files are read with `git show <commit>:<path>`.
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

/** Where AIConfigurator keeps its perf data in the repository. */
export const AIC_DATA = "aic-core/src/aiconfigurator_core/systems/data";

export interface AicSource {
  /** The resolved commit of `--ref`. */
  readonly commit: string;
  /** The folder the derived files go below (`--out`). */
  readonly out: string;
  /** Runs git in the AIConfigurator repository. */
  git(args: string[]): Buffer;
}

/** Parses the shared options; prints the usage of `script` and exits 2 without `--aic`. */
export function aicSourceFromArgs(script: string): AicSource {
  const { values } = parseArgs({
    options: {
      aic: { type: "string" },
      ref: { type: "string", default: "HEAD" },
      out: { type: "string", default: "src/hardware" },
    },
  });
  if (values.aic === undefined) {
    console.error(`usage: ${script} --aic <aiconfigurator git dir> [--ref HEAD] [--out src/hardware]`);
    process.exit(2);
  }
  const aic = resolve(values.aic);
  const git = (args: string[]): Buffer => execFileSync("git", ["-C", aic, ...args], { maxBuffer: 1 << 30 });
  return {
    commit: git(["rev-parse", values.ref ?? "HEAD"])
      .toString()
      .trim(),
    out: resolve(values.out ?? "src/hardware"),
    git,
  };
}
