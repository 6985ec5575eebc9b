/**
 * `fleetsim sweep run` (docs/sweep.md): runs points of a planned sweep directory — all of them, or
 * the one a shard index names — through a sweep executor (`predict` task jobs), and publishes each
 * result as soon as it arrives (results.ts). A point whose result is already there is not run
 * again, so a rerun resumes and a duplicate worker costs nothing. Each point is rebuilt from the
 * directory alone (its base copy and overrides), its hash checked against the plan and its input
 * files against their planned content before it runs.
 */

import { existsSync } from "node:fs";
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
import { publishResult, resultDocument, resultPath } from "./results.js";

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
  const todo = indices.filter((i) => !existsSync(resultPath(opts.dir, byIndex.get(i)!.hash)));
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
