/**
 * `fleetsim sweep k8s` (docs/sweep.md "On Kubernetes"): a Kubernetes Indexed Job (batch/v1) that
 * runs every point of a planned sweep directory, one pod per index — completions = points, each
 * pod `fleetsim sweep run DIR` with the index Kubernetes gives it in `JOB_COMPLETION_INDEX` — on a
 * shared volume that holds the directory (its results are written there), with resource requests
 * from the resource preflight's estimate of the largest point. And the Dockerfile of an image that
 * runs it: node:20-slim with the packed fleetsim package installed.
 */
import { posix } from "node:path";
import { stringify } from "yaml";
import { MIB } from "../resources/preflight.js";
import { UserError } from "../util/userError.js";
import type { Manifest } from "./manifest.js";

export interface JobOptions {
  readonly image: string;
  /** Pods at once (`spec.parallelism`). */
  readonly parallelism: number;
  /** The PersistentVolumeClaim that holds the sweep directory (ReadWriteMany: every pod writes). */
  readonly claim: string;
  /** The sweep directory's path inside that volume ("" = its root). */
  readonly subPath: string;
  /** Job name; default `fleetsim-sweep-<first 10 hex of the manifest hash>`. */
  readonly name: string | null;
  readonly namespace: string | null;
  /** Retries of one index before it counts as failed (`backoffLimitPerIndex`). */
  readonly retries: number;
}

/** A Job option Kubernetes would refuse (exit 2). */
export class JobOptionError extends UserError {}

/** Where the pods mount the sweep directory. */
export const MOUNT_PATH = "/sweep";

/** Memory requested over the preflight's estimate, and the limit over it (the estimate is a model). */
const REQUEST_HEADROOM = 1.25;
const LIMIT_FACTOR = 2;

/** A DNS-1123 label (names of Jobs, containers, volumes). */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function jobManifest(manifest: Manifest, opts: JobOptions): Record<string, unknown> {
  const name = opts.name ?? `fleetsim-sweep-${manifest.manifest_hash.slice(0, 10)}`;
  // A Job's pods get `job-name` labels and `<name>-<index>-<random>` names: 63 characters at most.
  if (!DNS_LABEL.test(name) || name.length > 52) {
    throw new JobOptionError(
      `--name ${name}: a Job name is lower-case letters, digits and '-', at most 52 characters`,
    );
  }
  if (!DNS_LABEL.test(opts.claim) && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(opts.claim)) {
    throw new JobOptionError(`--claim ${opts.claim}: not a valid PersistentVolumeClaim name`);
  }
  if (opts.subPath.startsWith("/") || opts.subPath.split("/").includes("..")) {
    throw new JobOptionError(
      `--sub-path ${opts.subPath}: a path inside the volume, relative and without '..'`,
    );
  }
  if (opts.image.trim() === "" || /\s/.test(opts.image))
    throw new JobOptionError(`--image '${opts.image}': not an image reference`);
  const points = manifest.points.length;
  const peak = Math.max(...manifest.points.map((p) => p.estimated_bytes));
  const cpus = Math.max(...manifest.points.map((p) => p.processes));
  const mebibytes = (factor: number): string => `${Math.ceil((peak * factor) / MIB)}Mi`;
  const labels = {
    "app.kubernetes.io/name": "fleetsim",
    "app.kubernetes.io/component": "sweep",
    "fleetsim/sweep": manifest.manifest_hash.slice(0, 10),
  };
  const mount: Record<string, unknown> = { name: "sweep", mountPath: MOUNT_PATH };
  if (opts.subPath !== "") mount["subPath"] = posix.normalize(opts.subPath);
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, ...(opts.namespace === null ? {} : { namespace: opts.namespace }), labels },
    spec: {
      completionMode: "Indexed",
      completions: points,
      parallelism: Math.min(opts.parallelism, points),
      // A failing point is retried alone and does not stop the others (Kubernetes ≥ 1.29).
      backoffLimitPerIndex: opts.retries,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          // The image runs as `node` (uid 1000): the volume is made writable for its group.
          securityContext: { runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
          containers: [
            {
              name: "point",
              image: opts.image,
              // The image's entrypoint is `fleetsim`; the index comes from JOB_COMPLETION_INDEX.
              args: ["sweep", "run", MOUNT_PATH],
              resources: {
                requests: { cpu: String(cpus), memory: mebibytes(REQUEST_HEADROOM) },
                limits: { memory: mebibytes(LIMIT_FACTOR) },
              },
              volumeMounts: [mount],
            },
          ],
          volumes: [{ name: "sweep", persistentVolumeClaim: { claimName: opts.claim } }],
        },
      },
    },
  };
}

/** The Job as YAML, with a header that says what it runs and how to start it. */
export function jobYaml(manifest: Manifest, opts: JobOptions): string {
  const job = jobManifest(manifest, opts);
  const spec = job["spec"] as { completions: number; parallelism: number };
  return (
    `# fleetsim sweep: ${spec.completions} points, ${spec.parallelism} pods at once, results in ` +
    `${MOUNT_PATH}/results/ on PVC ${opts.claim}${opts.subPath === "" ? "" : ` (sub-path ${opts.subPath})`}.\n` +
    "# Start: kubectl apply -f job.yaml; when it completes: fleetsim sweep merge DIR -o OUT (docs/sweep.md)\n" +
    // No anchors: the labels appear twice as plain mappings, as kubectl users write them.
    stringify(job, { lineWidth: 0, aliasDuplicateObjects: false })
  );
}

/**
 * The image's Dockerfile: the package as `npm pack` writes it (`fleetsim-<version>.tgz`, next to
 * the Dockerfile), installed globally on node:20-slim, `fleetsim` as the entrypoint.
 */
export function dockerfile(version: string): string {
  const tarball = `fleetsim-${version}.tgz`;
  return [
    '# fleetsim sweep worker image (docs/sweep.md "The image").',
    `# Build: npm pack (writes ${tarball}), then docker build -t IMAGE .`,
    "FROM node:20-slim",
    `COPY ${tarball} /tmp/${tarball}`,
    `RUN npm install --global --omit=dev /tmp/${tarball} && rm /tmp/${tarball} && npm cache clean --force`,
    "# No root needed: the pods write only to the mounted sweep directory.",
    "USER node",
    "WORKDIR /home/node",
    'ENTRYPOINT ["fleetsim"]',
    'CMD ["--help"]',
    "",
  ].join("\n");
}
