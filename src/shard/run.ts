/**
 * `fleetsim sweep run` (docs/sweep.md): runs points of a planned sweep directory — all of them, or
 * the one a shard index names — through a sweep executor (`predict` task jobs), and publishes each
 * result as soon as it arrives (results.ts). A point whose result is already there is not run
 * again, so a rerun resumes and a duplicate worker costs nothing; a result is read back and checked
 * before it counts (a damaged one, e.g. cut short by a full disk, is run again). Each point is rebuilt from the
 * directory alone (its base copy and overrides), its hash checked against the plan and its input
 * files against their planned content before it runs.
 */

import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { RunSpec } from "../config/runSpec.js";
import { readYamlSource } from "../config/yamlSource.js";
import type { PredictJob, PredictJobOutput } from "../pipeline/predictTask.js";
import { sweepExecutor } from "../pipeline/sweepTasks.js";
import type { ExecutorSpec, SweepExecutor } from "../sweep/executor.js";
import { checkInputs } from "./inputs.js";
import {
  checkManifest,
  type LoadedManifest,
  type ManifestPoint,
  manifestPoint,
  pointHash,
  SweepDirError,
} from "./manifest.js";
import { pointDocument, resolvePoint } from "./point.js";
import { publishResult, readResult, resultDocument, resultPath } from "./results.js";

export interface RunOptions {
  readonly dir: string;
  /** The sweep directory's manifest (`loadManifest`). */
  readonly manifest: LoadedManifest;
  /** One point, or null for every point of the plan. */
  readonly index: number | null;
  readonly executor: ExecutorSpec;
  /** Worker processes at most (the local executor). */
  readonly parallel: number;
  /** Wall-clock bound of the whole run, ms. */
  readonly timeoutMs: number;
  readonly version: string;
  readonly signal?: AbortSignal;
  /** One line per point done (stderr). */
  readonly log?: (line: string) => void;
}

export interface RunSummary {
  readonly points: number;
  readonly written: number;
  /** Points whose result was already there (not run again, or written meanwhile by another worker). */
  readonly kept: number;
  readonly failed: readonly { readonly index: number; readonly error: string }[];
  readonly wallMs: number;
}

/** Jobs handed to the executor at once: results stream out as they finish, memory stays bounded. */
const WAVE = 32;

export async function runPoints(opts: RunOptions): Promise<RunSummary> {
  const t0 = performance.now();
  // Made first (it starts nothing yet): an executor this build refuses is refused before any work.
  const executor = sweepExecutor("predict", opts.executor);
  try {
    return await runWith(executor, opts, t0);
  } finally {
    await executor.close();
  }
}

async function runWith(executor: SweepExecutor, opts: RunOptions, t0: number): Promise<RunSummary> {
  // One point: that point checked alone (a pod of a large plan reads no more); all: everything.
  const points =
    opts.index === null ? checkManifest(opts.manifest).points : [manifestPoint(opts.manifest, opts.index)];
  const byIndex = new Map(points.map((p) => [p.index, p]));
  const indices = points.map((p) => p.index);
  checkResultsFolder(opts.dir);
  const todo = indices.filter((i) => !hasValidResult(opts, i, byIndex.get(i)!.hash));
  let kept = indices.length - todo.length;
  let written = 0;
  const failed: { index: number; error: string }[] = [];
  if (todo.length === 0) {
    return { points: indices.length, written, kept, failed, wallMs: performance.now() - t0 };
  }
  const resolver = new PointResolver(opts.dir, opts.manifest, opts.version);
  for (let start = 0; start < todo.length; start += WAVE) {
    if (opts.signal?.aborted === true) break;
    const wave = todo.slice(start, start + WAVE);
    const jobs: PredictJob[] = wave.map((i) => ({ spec: resolver.spec(byIndex.get(i)!) }));
    opts.log?.(`running point${wave.length === 1 ? "" : "s"} ${wave.join(", ")}`);
    const outcome = await executor.sweep<PredictJobOutput>(jobs, {
      maxParallel: Math.max(1, Math.min(opts.parallel, jobs.length)),
      timeoutMs: Math.max(1, opts.timeoutMs - (performance.now() - t0)),
      signal: opts.signal,
      onResult: (j, result) => {
        const index = wave[j];
        if (result.status !== "ok") {
          if (result.status === "failed") failed.push({ index, error: result.error });
          return;
        }
        const value = result.value as PredictJobOutput;
        const hash = byIndex.get(index)!.hash;
        const outcome = publishResult(
          opts.dir,
          resultDocument(hash, opts.version, value.prediction, value.warnings),
        );
        const check = readResult(opts.dir, hash);
        if (!check.ok) {
          const problem = check.missing ? "it is gone" : check.problem;
          failed.push({ index, error: `its result did not read back (results/${hash}.json: ${problem})` });
          return;
        }
        if (outcome === "written") written++;
        else kept++;
        opts.log?.(`point ${index} ${outcome === "written" ? "done" : "already done"}: results/${hash}.json`);
      },
    });
    outcome.results.forEach((r, j) => {
      if (r.status === "timeout")
        failed.push({ index: wave[j], error: "stopped before it finished (timeout or signal)" });
    });
  }
  failed.sort((a, b) => a.index - b.index);
  return { points: indices.length, written, kept, failed, wallMs: performance.now() - t0 };
}

/**
 * The sweep directory's `results` must be a folder (or not there yet): checked before any point
 * runs, so a run cannot spend its points and then fail to publish them.
 */
function checkResultsFolder(dir: string): void {
  const results = join(dir, "results");
  let isFolder: boolean;
  try {
    isFolder = statSync(results).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new SweepDirError(`${results} cannot be read: ${(err as Error).message}`);
  }
  if (!isFolder) {
    throw new SweepDirError(
      `${results} is not a folder: a sweep directory keeps its points' results in a folder of that name; move the file away and run again`,
    );
  }
}

/**
 * Whether point `index` already has a result that reads back whole (JSON, the result schema, its
 * own hash). A damaged one is removed, said, and the point runs again: results are deterministic,
 * so removing one that another worker just rewrote costs a rerun, never a wrong result.
 */
function hasValidResult(opts: RunOptions, index: number, hash: string): boolean {
  const found = readResult(opts.dir, hash);
  if (found.ok) return true;
  if (!found.missing) {
    opts.log?.(`point ${index}: results/${hash}.json is damaged (${found.problem}); running it again`);
    try {
      rmSync(resultPath(opts.dir, hash), { force: true });
    } catch (err) {
      throw new SweepDirError(
        `${resultPath(opts.dir, hash)} is damaged and cannot be removed: ${(err as Error).message}`,
      );
    }
  }
  return false;
}

/** Rebuilds points from the sweep directory alone, as a pod that mounts it would. */
export class PointResolver {
  private readonly basePath: string;
  private readonly source: ReturnType<typeof readYamlSource>;
  private readonly checked = new Set<string>();

  constructor(
    private readonly dir: string,
    private readonly manifest: LoadedManifest,
    private readonly version: string,
  ) {
    this.basePath = join(dir, manifest.base.file);
    this.source = readYamlSource(this.basePath);
  }

  spec(point: ManifestPoint): RunSpec {
    const { index } = point;
    const sets = point.set.map((s) => ({ ...s, origin: `${this.dir} point ${index}: ${s.path}` }));
    const doc = pointDocument(this.basePath, this.source, sets);
    const inputs = point.inputs.map((i) => this.manifest.inputs[i]);
    if (pointHash(this.version, this.manifest.stack, doc.data, inputs) !== point.hash) {
      throw new SweepDirError(
        `${this.basePath} no longer makes point ${index} of ${join(this.dir, "manifest.json")} (its hash differs); plan the sweep again`,
      );
    }
    checkInputs(this.dir, inputs, this.checked);
    return resolvePoint(doc, this.manifest.stack, `point ${index}`, this.dir);
  }
}
