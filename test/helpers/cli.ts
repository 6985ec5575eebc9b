import { runCli } from "../../src/cli/main.js";

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in-process with captured stdout/stderr. */
export async function cli(...argv: string[]): Promise<CliRun> {
  let out = "";
  let err = "";
  const code = await runCli(argv, {
    out: (s) => {
      out += s;
    },
    err: (s) => {
      err += s;
    },
  });
  return { code, out, err };
}
