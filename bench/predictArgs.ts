/**
 * The arguments of one measured `fleetsim predict` run (the benches' common command line): the
 * executable, the dynamo stack by default, the config and overrides, an output folder it may
 * overwrite, JSON on stdout and no progress bar.
 */
export function predictArgs(
  bin: string,
  config: string,
  outputDir: string,
  sets: readonly string[],
  stack = "dynamo",
): string[] {
  return [
    bin,
    "predict",
    "--stack",
    stack,
    "-c",
    config,
    "--output-dir",
    outputDir,
    "--overwrite",
    "--format",
    "json",
    "--progress",
    "none",
    ...sets.flatMap((s) => ["--set", s]),
  ];
}
