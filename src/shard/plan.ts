/**
 * `fleetsim sweep plan` (docs/sweep.md): the sweep file's grid → a sweep directory any worker can
 * run a point of. Every point is built and resolved by predict's config path now, so a mistake in
 * any of them is reported before anything is written (exit 2); then the base config and (by
 * default) the trace files are copied into `DIR/inputs/` under content-addressed names, each
 * point's overrides are pinned to those copies, and `manifest.json` is written last (through a
 * rename): a directory with a manifest is a complete plan.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { ConfigError } from "../config/errors.js";
import { getOwn, isMapping, type Mapping } from "../config/mapping.js";
import { parseOverride } from "../config/overrides.js";
import { DEFAULT_EXECUTION, type RunSpec, type Stack } from "../config/runSpec.js";
import { readYamlSource } from "../config/yamlSource.js";
import { stableLine, stableStringify } from "../report/json.js";
import { OutputDirError, OutputDirLock } from "../report/outputDir.js";
import { probeHost, resolveBudget } from "../resources/budget.js";
import {
  MIB,
  measureWorkload,
  plannedWorkerProcesses,
  planResources,
  type WorkloadSize,
} from "../resources/preflight.js";
import { warmupTraceFiles } from "../traffic/warmupTraceFiles.js";
import { isFile } from "../util/fsRead.js";
import { UserError } from "../util/userError.js";
import { copyInput, fileSha256, INPUTS_DIR, type InputFile } from "./inputs.js";
import {
  MANIFEST_FILE,
  MANIFEST_SCHEMA,
  type Manifest,
  type ManifestPoint,
  pointHash,
  withManifestHash,
} from "./manifest.js";
import { describeSet, type PointOverride, pointDocument, resolvePoint } from "./point.js";
import { type InputsMode, readSweepFile, type SweepFile, type SweepSet } from "./sweepFile.js";

export const RESULTS_DIR = "results";

/**
 * The resident memory of a fleetsim process with the simulator loaded, before its workload: the
 * base of each point's estimate instead of the planning process's own RSS, so the estimate (and
 * the Kubernetes requests made from it) is the same on every host. Measured with the bundled CLI
 * (Node 20, docs/sweep.md "Resources"): `fleetsim sweep run --index` of a five-request polynomial
 * point peaks at 66 MiB; of the bundled example (op-level timing, 315 requests) at 84–88 MiB,
 * which the preflight estimates at 106 MiB from this base.
 */
export const POINT_PROCESS_BYTES = 64 * MIB;

export interface PlanOptions {
  readonly sweepPath: string;
  readonly outDir: string;
  /** `--set` flags of the command line: applied to every point after the file's `set`. */
  readonly sets: readonly string[];
  /** `--stack`, over the file's `stack`; neither: inferred (below). */
  readonly stack: Stack | null;
  /** `--inputs`, over the file's `inputs`; neither: `copy`. */
  readonly inputs: InputsMode | null;
  readonly overwrite: boolean;
  readonly version: string;
}

export interface PlanOutcome {
  readonly manifest: Manifest;
  readonly manifestPath: string;
}

interface Planned {
  readonly values: Record<string, unknown>;
  readonly set: SweepSet[];
  readonly inputs: number[];
  readonly document: Mapping;
  readonly spec: RunSpec;
  readonly label: string;
}

export async function planSweep(opts: PlanOptions): Promise<PlanOutcome> {
  const file = readSweepFile(opts.sweepPath);
  const cliSets = opts.sets.map((flag) => cliSet(flag));
  const base = readYamlSource(file.basePath);
  const stack = opts.stack ?? file.stack ?? inferStack(base.data as Mapping, file, cliSets);
  const mode = opts.inputs ?? file.inputs ?? "copy";
  checkSweepDir(opts.outDir, opts.overwrite);

  // Every point resolved against the user's own files first: errors name their lines and flags.
  const workDir = process.cwd();
  const first: {
    overrides: PointOverride[];
    spec: RunSpec;
    values: Record<string, unknown>;
    label: string;
  }[] = [];
  // Two points of one configuration before pinning are one after it (the pins follow the spec).
  const seen = new Map<string, number>();
  for (const [index, values] of gridValues(file).entries()) {
    const overrides = pointOverrides(file, cliSets, values);
    const label = pointLabel(index, file, values);
    const doc = pointDocument(file.basePath, base, overrides);
    const key = stableLine(doc.data);
    const twin = seen.get(key);
    if (twin !== undefined) {
      throw new ConfigError(
        opts.sweepPath,
        [
          {
            path: "vary",
            message: `${label} is the same configuration as point ${twin}: an axis value restates what the base or another axis already sets`,
          },
        ],
        "duplicate points",
      );
    }
    seen.set(key, index);
    first.push({ overrides, spec: resolvePoint(doc, stack, label, workDir), values, label });
  }

  const created = !existsSync(opts.outDir);
  mkdirSync(opts.outDir, { recursive: true });
  const lock = OutputDirLock.acquire(opts.outDir);
  let complete = false;
  try {
    checkSweepDir(opts.outDir, opts.overwrite);
    mkdirSync(join(opts.outDir, INPUTS_DIR), { recursive: true });
    mkdirSync(join(opts.outDir, RESULTS_DIR), { recursive: true });
    const baseHash = fileSha256(file.basePath).sha256;
    // The base config is an input like a trace: copied under its content hash.
    const baseRel = copyInput(opts.outDir, file.basePath, baseHash);
    const baseCopy = join(opts.outDir, baseRel);
    const copySource = readYamlSource(baseCopy);

    const inputs = new InputTable(opts.outDir, mode, file.basePath, baseRel);
    const planned: Planned[] = first.map(({ overrides, spec, values, label }) => {
      const { pins, used } = inputs.pin(spec, pointDocument(file.basePath, base, overrides).data);
      const set = [...overrides, ...pins];
      const doc = pointDocument(baseCopy, copySource, set);
      // The pinned point resolved as a worker will resolve it: from the sweep directory's copy.
      const pinnedSpec = resolvePoint(doc, stack, label, workDir);
      return {
        values,
        set: set.map(({ path, value }) => ({ path, value })),
        inputs: used,
        document: doc.data,
        spec: pinnedSpec,
        label,
      };
    });

    const points: ManifestPoint[] = [];
    const workloads = new Map<string, Promise<WorkloadSize>>();
    for (const [index, p] of planned.entries()) {
      const hash = pointHash(
        opts.version,
        stack,
        p.document,
        p.inputs.map((i) => inputs.files[i]),
      );
      const estimate = await estimateBytes(p.spec, workloads);
      points.push({
        index,
        hash,
        values: p.values,
        set: p.set,
        inputs: p.inputs,
        estimated_bytes: estimate,
        processes: 1 + plannedWorkerProcesses(p.spec),
      });
    }
    const manifest = withManifestHash({
      schema: MANIFEST_SCHEMA,
      fleetsim_version: opts.version,
      stack,
      base: { file: baseRel, sha256: baseHash },
      inputs_mode: mode,
      inputs: inputs.files,
      axes: file.axes.map((a) => ({ path: a.path, values: [...a.values] })),
      optimization: file.optimization,
      points,
    });
    const manifestPath = join(opts.outDir, MANIFEST_FILE);
    const tmp = `${manifestPath}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${stableStringify(manifest)}\n`);
      renameSync(tmp, manifestPath);
    } finally {
      rmSync(tmp, { force: true });
    }
    complete = true;
    return { manifest, manifestPath };
  } finally {
    lock.release();
    // A plan that failed half-way leaves no directory it created (an earlier plan's stays as it was).
    if (!complete && created) rmSync(opts.outDir, { recursive: true, force: true });
  }
}

/** The engine stack refuses `router` and `planner` sections: a sweep that has one needs dynamo. */
function inferStack(base: Mapping, file: SweepFile, cliSets: readonly SweepSet[]): Stack {
  const dynamoKey = (p: string): boolean => /^(router|planner)(\.|$)/.test(p);
  const touched =
    getOwn(base, "router") !== undefined ||
    getOwn(base, "planner") !== undefined ||
    [...file.set, ...cliSets].some((s) => dynamoKey(s.path)) ||
    file.axes.some((a) => dynamoKey(a.path));
  return touched ? "dynamo" : "engine";
}

/** A `--set` flag of the command line, parsed as predict parses it (the value as YAML). */
function cliSet(flag: string): SweepSet {
  const r = parseOverride(flag);
  if (!r.ok) throw new ConfigError("--set", [r.issue], "invalid --set override");
  return { path: r.override.path.join("."), value: r.override.value };
}

/** Each point's axis values, first axis outermost (row-major in file order). */
export function gridValues(file: Pick<SweepFile, "axes">): Record<string, unknown>[] {
  let out: Record<string, unknown>[] = [{}];
  for (const axis of file.axes) {
    const next: Record<string, unknown>[] = [];
    for (const prefix of out) for (const v of axis.values) next.push({ ...prefix, [axis.path]: v });
    out = next;
  }
  return out;
}

function pointOverrides(
  file: SweepFile,
  cliSets: readonly SweepSet[],
  values: Record<string, unknown>,
): PointOverride[] {
  const name = basename(file.path);
  const out: PointOverride[] = [];
  for (const [i, s] of file.set.entries()) out.push({ ...s, origin: `${name} set[${i}]: ${describeSet(s)}` });
  for (const s of cliSets) out.push({ ...s, origin: `--set ${describeSet(s)}` });
  for (const axis of file.axes) {
    const s = { path: axis.path, value: values[axis.path] };
    const line = axis.line === null ? "" : ` line ${axis.line}`;
    out.push({ ...s, origin: `${name}${line}: vary ${describeSet(s)}` });
  }
  return out;
}

function pointLabel(index: number, file: SweepFile, values: Record<string, unknown>): string {
  const parts = file.axes.map((a) => describeSet({ path: a.path, value: values[a.path] }));
  return parts.length === 0 ? `point ${index}` : `point ${index} (${parts.join(", ")})`;
}

/** The files the points read, each hashed (and copied) once, and the overrides that pin a point to them. */
class InputTable {
  readonly files: InputFile[] = [];
  private readonly byPath = new Map<string, number>();

  constructor(
    private readonly dir: string,
    private readonly mode: InputsMode,
    /** The user's base config, whose folder relative paths in it resolve against. */
    private readonly basePath: string,
    /** The base's copy, relative to the sweep directory. */
    private readonly baseCopy: string,
  ) {}

  /** `document`: the point before pinning (its original relative paths, for the model and perf data). */
  pin(spec: RunSpec, document: Mapping): { pins: PointOverride[]; used: number[] } {
    const pins: PointOverride[] = [];
    const used: number[] = [];
    const pin = (path: string, value: unknown, why: string): void => {
      pins.push({ path, value, origin: `fleetsim sweep plan: ${why}` });
    };
    const src = spec.source;
    if (src.type === "trace") {
      if (src.format === "weka" && statSync(src.path).isDirectory()) {
        // A sweep directory holds copies of files (hashed one by one); a corpus directory would
        // need its tree copied and hashed as one input.
        throw new UserError(
          `fleetsim sweep plan: traffic.source.paths names a Weka corpus directory (${src.path}); a sweep plan needs one .json play, or run the corpus with fleetsim predict`,
        );
      }
      const files = src.format === "dynamo" ? src.paths : [src.path];
      const paths = files.map((f) => {
        const i = this.add(f, this.mode);
        used.push(i);
        // Relative to the base's copy (in its own folder of inputs/), as predict resolves it.
        return this.mode === "copy"
          ? relative(dirname(this.baseCopy), this.files[i].path)
          : this.files[i].path;
      });
      pin("traffic.source.paths", paths, `the trace files as planned (inputs: ${this.mode})`);
    }
    const warmup = spec.planner?.loadPredictorWarmupTrace ?? null;
    if (warmup !== null) {
      for (const f of warmupTraceFiles(warmup)) used.push(this.add(f, "reference"));
      pin("planner.load_predictor_warmup_trace", warmup, "the warm-up trace by absolute path");
    }
    const engine = getOwn(document, "engine");
    if (isMapping(engine)) {
      const perf = getOwn(engine, "perf_database");
      if (typeof perf === "string" && !isAbsolute(perf)) {
        pin(
          "engine.perf_database",
          resolve(dirname(this.basePath), perf),
          "the perf database by absolute path",
        );
      }
      const model = getOwn(engine, "model");
      if (typeof model === "string" && !isAbsolute(model)) {
        const local = [process.cwd(), dirname(this.basePath)]
          .map((d) => resolve(d, model))
          // As model/resolve.ts finds a local checkpoint: a folder with a config.json.
          .find((p) => isFile(join(p, "config.json")));
        if (local !== undefined) pin("engine.model", local, "the local model directory by absolute path");
      }
    }
    return { pins, used: [...new Set(used)] };
  }

  private add(file: string, mode: InputsMode): number {
    const known = this.byPath.get(file);
    if (known !== undefined) return known;
    const { sha256, bytes } = fileSha256(file);
    const path = mode === "copy" ? copyInput(this.dir, file, sha256) : resolve(file);
    const i = this.files.push({ path, sha256, bytes }) - 1;
    this.byPath.set(file, i);
    return i;
  }
}

/**
 * A plan goes into an absent or empty directory, or over an earlier plan with `--overwrite` (its
 * results stay: they are named by content, and a point planned again finds its result).
 */
function checkSweepDir(dir: string, overwrite: boolean): void {
  if (dir.trim() === "") throw new OutputDirError("the sweep directory (-o) must not be empty");
  let entries: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new OutputDirError(`${dir} exists and is not a directory`);
    entries = readdirSync(dir).filter((n) => !n.startsWith(".fleetsim"));
  } catch (err) {
    if (err instanceof OutputDirError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new OutputDirError(`cannot read ${dir}: ${(err as Error).message}`);
  }
  if (entries.length === 0) return;
  // Only what a plan writes, without its manifest: a plan that did not finish; plan over it.
  if (entries.every((n) => n === INPUTS_DIR || n === RESULTS_DIR)) return;
  if (!entries.includes(MANIFEST_FILE)) {
    throw new OutputDirError(`${dir} is not empty and holds no sweep plan; choose an empty or new directory`);
  }
  if (!overwrite) {
    throw new OutputDirError(
      `${dir} already holds a sweep plan; pass --overwrite to plan it again (its results are kept)`,
    );
  }
}

/** The preflight's estimate of one run of `spec`, from a fixed process base (`POINT_PROCESS_BYTES`). */
async function estimateBytes(spec: RunSpec, workloads: Map<string, Promise<WorkloadSize>>): Promise<number> {
  const key = JSON.stringify([spec.source, spec.load, spec.stop]);
  let w = workloads.get(key);
  if (w === undefined) {
    w = measureWorkload(spec);
    workloads.set(key, w);
  }
  const workload = { ...(await w), coordinatorRssBytes: POINT_PROCESS_BYTES };
  const budget = resolveBudget((spec.execution ?? DEFAULT_EXECUTION).resources, probeHost());
  return planResources(spec, budget, workload).estimatedBytes;
}
