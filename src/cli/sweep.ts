import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { Stack } from "../config/runSpec.js";
import { renderRanking } from "../recommend/result.js";
import { checkOutputDir, OutputCancelled, OutputDirLock, writeOutputs } from "../report/outputDir.js";
import { StopSignals } from "../resources/stopSignals.js";
import { loadManifest, readManifest } from "../shard/manifest.js";
import { planSweep } from "../shard/plan.js";
import { runPoints } from "../shard/run.js";
import { shardIndex } from "../shard/shardIndex.js";
import type { InputsMode } from "../shard/sweepFile.js";
import { parseExecutor } from "../sweep/executor.js";
import { packageVersion } from "../util/packageRoot.js";
import { ExitCode, Interrupted } from "./exitCodes.js";
import type { Streams } from "./streams.js";

const VERSION = packageVersion();

/** The longest timer Node keeps (about 24.8 days): "no bound" for a sweep's wall clock. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

export interface SweepPlanOptions {
  readonly config: string;
  readonly output: string;
  readonly set: readonly string[];
  readonly stack?: Stack;
  readonly inputs?: InputsMode;
  readonly overwrite: boolean;
}

/** `fleetsim sweep plan -c sweep.yaml -o DIR`: writes the sweep directory and says how to run it. */
export async function sweepPlanCommand(opts: SweepPlanOptions, io: Streams): Promise<void> {
  const { manifest, manifestPath } = await planSweep({
    sweepPath: opts.config,
    outDir: opts.output,
    sets: opts.set,
    stack: opts.stack ?? null,
    inputs: opts.inputs ?? null,
    overwrite: opts.overwrite,
    version: VERSION,
  });
  const n = manifest.points.length;
  const axes = manifest.axes.map((a) => `${a.path} (${a.values.length})`).join(" × ");
  io.out(
    `Planned ${n} point${n === 1 ? "" : "s"}${axes === "" ? "" : `: ${axes}`}, stack ${manifest.stack}, inputs ${manifest.inputs_mode}\n` +
      `Saved manifest to: ${manifestPath} (manifest_hash ${manifest.manifest_hash.slice(0, 16)}…)\n` +
      `Run all here:   fleetsim sweep run ${opts.output}\n` +
      `Run one point:  fleetsim sweep run ${opts.output} --index I   (or JOB_COMPLETION_INDEX / SLURM_ARRAY_TASK_ID, I in 0..${n - 1})\n`,
  );
}

export interface SweepRunOptions {
  readonly dir: string;
  readonly index?: string;
  readonly executor?: string;
  readonly parallel?: number;
  readonly timeoutSeconds?: number;
  /** The environment the shard index is read from (tests pass their own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * `fleetsim sweep run DIR [--index I]`: runs the points that have no result yet. Exit 0 when every
 * requested point has its result, 1 when some failed (the others are kept), 130/143 on a signal
 * (finished points are kept).
 */
export async function sweepRunCommand(opts: SweepRunOptions, io: Streams): Promise<number> {
  const executorSpec = opts.executor === undefined ? null : parseExecutor(opts.executor);
  const manifest = loadManifest(opts.dir, VERSION);
  const shard = shardIndex(opts.index, opts.env ?? process.env, manifest.points.length);
  const executor =
    executorSpec ?? (shard === null ? { kind: "local" as const } : { kind: "inline" as const });
  const abort = new AbortController();
  const signals = new StopSignals((signal) => {
    process.exit(signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted);
  }).install();
  signals.onStop(() => {
    abort.abort();
    // A point in this process cannot be stopped half-way, and nothing of it is published until it
    // ends: leave now (a pod's SIGTERM), keeping the points already published.
    if (executor.kind === "inline") {
      process.exit(signals.stopped === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted);
    }
  });
  try {
    const summary = await runPoints({
      dir: opts.dir,
      manifest,
      index: shard?.index ?? null,
      executor,
      parallel: opts.parallel ?? Math.max(1, availableParallelism() - 1),
      timeoutMs: opts.timeoutSeconds === undefined ? NO_TIMEOUT_MS : Math.max(1, opts.timeoutSeconds * 1000),
      version: VERSION,
      signal: abort.signal,
      log: (line) => io.err(`fleetsim: info: ${line}\n`),
    });
    const stop = signals.stopped;
    if (stop !== null) throw new Interrupted(stop);
    const what = shard === null ? `${summary.points} points` : `point ${shard.index} (${shard.from})`;
    io.out(
      `${what}: ${summary.written} run, ${summary.kept} already had a result, ${summary.failed.length} failed ` +
        `(${(summary.wallMs / 1000).toFixed(1)} s)\n`,
    );
    for (const f of summary.failed) io.err(`fleetsim: error: point ${f.index} failed: ${f.error}\n`);
    return summary.failed.length > 0 ? ExitCode.Failure : ExitCode.Ok;
  } finally {
    signals.uninstall();
  }
}

export interface SweepMergeOptions {
  readonly dir: string;
  readonly output: string;
  readonly overwrite: boolean;
  readonly allowMissing: boolean;
  readonly compareTop: number;
  readonly format: "table" | "json";
}

/** `fleetsim sweep merge DIR -o OUT`: the table, recommend's files and the comparison page, as one transaction. */
export async function sweepMergeCommand(opts: SweepMergeOptions, io: Streams): Promise<void> {
  checkOutputDir(opts.output, opts.overwrite);
  const lock = OutputDirLock.acquire(opts.output);
  const signals = new StopSignals((signal) => {
    process.exit(signal === "SIGTERM" ? ExitCode.Terminated : ExitCode.Interrupted);
  }).install();
  try {
    checkOutputDir(opts.output, opts.overwrite);
    const { mergeSweep } = await import("../shard/merge.js");
    const outcome = await mergeSweep({
      dir: opts.dir,
      outDir: opts.output,
      version: VERSION,
      allowMissing: opts.allowMissing,
      compareTop: opts.compareTop,
    });
    await writeOutputs(opts.output, outcome.files, opts.overwrite, {
      cancelled: () => signals.stopped !== null,
    });
    const saved = `Saved sweep table to: ${join(opts.output, "sweep.csv")}\nSaved full result to: ${join(opts.output, "recommendation.json")}`;
    const page = outcome.files.some((f) => f.name === "compare.html")
      ? `\nSaved comparison page to: ${join(opts.output, "compare.html")}`
      : "";
    if (opts.format === "json") {
      io.out(`${renderRanking(outcome.rows, "json")}\n`);
      io.err(`${saved}${page}\n`);
    } else io.out(`${renderRanking(outcome.rows, "table")}\n${saved}${page}\n`);
    if (outcome.missing.length > 0) {
      io.err(
        `fleetsim: warning: merged ${outcome.points - outcome.missing.length} of ${outcome.points} points (--allow-missing)\n`,
      );
    }
  } catch (err) {
    const stop = signals.stopped;
    if (stop !== null && err instanceof OutputCancelled) throw new Interrupted(stop);
    throw err;
  } finally {
    signals.uninstall();
    lock.release();
  }
}

export interface SweepK8sOptions {
  readonly dir: string;
  readonly image: string;
  readonly parallelism: number;
  readonly claim: string;
  readonly subPath: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly retries: number;
  readonly dockerfile?: string;
}

/** `fleetsim sweep k8s DIR --image IMAGE --parallelism P`: the Indexed Job on stdout (and the Dockerfile). */
export async function sweepK8sCommand(opts: SweepK8sOptions, io: Streams): Promise<void> {
  const manifest = readManifest(opts.dir, VERSION);
  const { dockerfile, jobYaml } = await import("../shard/k8s.js");
  const yaml = jobYaml(manifest, { ...opts, name: opts.name ?? null, namespace: opts.namespace ?? null });
  if (opts.dockerfile !== undefined) {
    await writeOutputFile(opts.dockerfile, dockerfile(VERSION));
    io.err(`Saved Dockerfile to: ${opts.dockerfile}\n`);
  }
  io.out(yaml);
}

async function writeOutputFile(path: string, text: string): Promise<void> {
  const { renameSync, rmSync, writeFileSync } = await import("node:fs");
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (err) {
    const { UserError } = await import("../util/userError.js");
    throw new UserError(`cannot write ${path}: ${(err as Error).message}`);
  } finally {
    rmSync(tmp, { force: true });
  }
}
