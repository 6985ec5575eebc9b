/**
 * The sweep directory's manifest (docs/sweep.md "The sweep directory"): `manifest.json`, the
 * planned points in index order, each with the overrides that make it from the base config and
 * its content hash. A point's hash covers everything its result depends on — the fleetsim
 * version, the stack, the concrete predict document and the content of every input file it reads
 * — and nothing about where or when it runs, so it names the point's result file
 * (`results/<hash>.json`) on any executor. The manifest carries its own hash, so a truncated or
 * edited manifest is refused rather than run.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import * as z from "zod";
import type { Mapping } from "../config/mapping.js";
import type { Stack } from "../config/runSpec.js";
import { Optimization } from "../config/schema/recommend.js";
import { stableLine } from "../report/json.js";
import { readTextFile } from "../util/fsRead.js";
import { UserError } from "../util/userError.js";
import type { InputFile } from "./inputs.js";

export const MANIFEST_FILE = "manifest.json";
export const MANIFEST_SCHEMA = "fleetsim.sweep-manifest.v1";

/** The sweep directory cannot be used: no manifest, a corrupt one, another version's (exit 2). */
export class SweepDirError extends UserError {}

/**
 * Config values as the plan wrote them (JSON by construction). Not checked value by value with
 * `z.json()`: that costs a pod most of its start-up on a large plan, and `manifest_hash` already
 * proves the document is the one the plan wrote.
 */
const json = z.unknown();
const inputFile = z.strictObject({ path: z.string(), sha256: z.string(), bytes: z.number() });
const setEntry = z.strictObject({ path: z.string(), value: json });

const pointSchema = z.strictObject({
  index: z.number().int().min(0),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  /** Each axis's value at this point, by axis path. */
  values: z.record(z.string(), json),
  /** Applied to the base config in order: the sweep's `set`, the axis values, then the input paths. */
  set: z.array(setEntry),
  /** Indices into the manifest's `inputs` of the files this point reads. */
  inputs: z.array(z.number().int().min(0)),
  /** The resource preflight's estimate of one run of this point's peak memory (docs/resources.md). */
  estimated_bytes: z.number(),
  /** Processes a run of this point uses at once: itself and its retune sweep workers. */
  processes: z.number().int().min(1),
});

const envelopeShape = {
  schema: z.literal(MANIFEST_SCHEMA),
  fleetsim_version: z.string(),
  stack: z.enum(["engine", "dynamo"]),
  /** The base config's copy, relative to the sweep directory. */
  base: z.strictObject({ file: z.string(), sha256: z.string() }),
  inputs_mode: z.enum(["copy", "reference"]),
  inputs: z.array(inputFile),
  axes: z.array(z.strictObject({ path: z.string(), values: z.array(json) })),
  optimization: Optimization,
  /** SHA-256 of this document without this key (stableLine). */
  manifest_hash: z.string(),
};

export const manifestSchema = z.strictObject({ ...envelopeShape, points: z.array(pointSchema) });

/** The manifest with its points not yet checked one by one (`checkManifest`, `manifestPoint`). */
const loadedSchema = z.strictObject({ ...envelopeShape, points: z.array(z.unknown()) });
export type LoadedManifest = z.infer<typeof loadedSchema> & { readonly path: string };

export type Manifest = z.infer<typeof manifestSchema>;
export type ManifestPoint = Manifest["points"][number];
export type ManifestBody = Omit<Manifest, "manifest_hash">;

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * A point's content hash: the version, the stack, the concrete predict document (sorted keys) and
 * its inputs' content hashes.
 */
export function pointHash(
  version: string,
  stack: Stack,
  document: Mapping,
  inputs: readonly InputFile[],
): string {
  return sha256Hex(
    stableLine({ fleetsim_version: version, stack, document, inputs: inputs.map((i) => i.sha256) }),
  );
}

export function withManifestHash(body: ManifestBody): Manifest {
  return { ...body, manifest_hash: sha256Hex(stableLine(body)) };
}

/**
 * Reads `dir/manifest.json` and checks everything but the points (`version`: the running
 * fleetsim's, which must be the plan's). A worker that runs one point checks only that one
 * (`manifestPoint`): the point's own hash, recomputed from the base copy before it runs, proves
 * it; the whole document's hash (`checkManifest`) is for those that read every point.
 */
export function loadManifest(dir: string, version: string): LoadedManifest {
  const path = join(dir, MANIFEST_FILE);
  const text = readTextFile(path);
  if (typeof text !== "string") {
    if (text.code === "ENOENT") {
      throw new SweepDirError(
        `${dir} is not a sweep directory: no ${MANIFEST_FILE} (run fleetsim sweep plan -c SWEEP.yaml -o ${dir})`,
      );
    }
    if (text.code === "EISDIR") {
      throw new SweepDirError(
        `${path} is a folder, not a sweep manifest; plan the sweep again (fleetsim sweep plan)`,
      );
    }
    throw new SweepDirError(`cannot read ${path}: ${text.message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SweepDirError(`${path} is not valid JSON (cut short?); plan the sweep again`);
  }
  const parsed = loadedSchema.safeParse(doc);
  if (!parsed.success) throw notAManifest(path, parsed.error);
  const m = parsed.data;
  if (m.fleetsim_version !== version) {
    throw new SweepDirError(
      `${dir} was planned with fleetsim ${m.fleetsim_version}; this is fleetsim ${version}: a point's result ` +
        "depends on the version, so plan the sweep again with this one (or run the planning version's image)",
    );
  }
  return { ...m, path };
}

/** Every point checked, and the document against its `manifest_hash`. */
export function checkManifest(loaded: LoadedManifest): Manifest {
  const { path, ...doc } = loaded;
  const parsed = manifestSchema.safeParse(doc);
  if (!parsed.success) throw notAManifest(path, parsed.error);
  const m = parsed.data;
  const { manifest_hash, ...body } = m;
  if (sha256Hex(stableLine(body)) !== manifest_hash) {
    throw new SweepDirError(
      `${path} does not match its manifest_hash (edited or truncated); plan the sweep again`,
    );
  }
  m.points.forEach((p, i) => {
    if (p.index !== i)
      throw new SweepDirError(`${path}: point ${i} has index ${p.index}; plan the sweep again`);
  });
  return m;
}

/** Point `index` of a loaded manifest, checked alone. */
export function manifestPoint(loaded: LoadedManifest, index: number): ManifestPoint {
  const parsed = pointSchema.safeParse(loaded.points[index]);
  if (!parsed.success || parsed.data.index !== index) {
    throw new SweepDirError(`${loaded.path}: point ${index} is damaged; plan the sweep again`);
  }
  return parsed.data;
}

/** `loadManifest` and `checkManifest`: the whole manifest, checked. */
export function readManifest(dir: string, version: string): Manifest {
  return checkManifest(loadManifest(dir, version));
}

function notAManifest(path: string, error: z.ZodError): SweepDirError {
  const issue = error.issues[0];
  return new SweepDirError(
    `${path} is not a fleetsim sweep manifest (${MANIFEST_SCHEMA}) at ${issue.path.join(".") || "the top"}: ${issue.message}`,
  );
}
