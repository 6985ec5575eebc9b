/**
 * `fleetsim sweep k8s` (docs/sweep.md "On Kubernetes"): the Indexed Job is valid against the
 * Kubernetes batch/v1 Job schema — kubernetes-models' validator, generated from the Kubernetes
 * OpenAPI definitions — and running each of its completion indices as its pods would (the same
 * container arguments, `JOB_COMPLETION_INDEX`, the sweep directory at the mount path) completes
 * the sweep with the results a local run writes. The Dockerfile is checked instruction by
 * instruction (no Docker here).
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Job } from "kubernetes-models/batch/v1/Job";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { dockerfile, jobManifest, MOUNT_PATH } from "../../src/shard/k8s.js";
import { readManifest } from "../../src/shard/manifest.js";
import { packageVersion } from "../../src/util/packageRoot.js";
import { cli } from "../helpers/cli.js";
import { fleetsimProcess } from "../helpers/process.js";
import { sweepProject } from "../helpers/sweepProject.js";

const VERSION = packageVersion();

const OPTIONS = {
  image: "registry.example/fleetsim:0.1.0",
  parallelism: 2,
  claim: "fleetsim-sweep",
  subPath: "",
  name: null,
  namespace: null,
  retries: 2,
} as const;

async function planned(vary: string): Promise<{ dir: string; root: string }> {
  const p = sweepProject(vary);
  const dir = join(p.dir, "plan");
  const r = await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir);
  expect(r.code, r.err).toBe(0);
  return { dir, root: p.dir };
}

interface Container {
  args: string[];
  image: string;
  resources: { requests: { cpu: string; memory: string }; limits: { memory: string } };
  volumeMounts: { name: string; mountPath: string; subPath?: string }[];
}

/** `fleetsim sweep k8s DIR` with the options the first test checks in the manifest. */
function printJob(dir: string): ReturnType<typeof cli> {
  return cli("sweep", "k8s", dir, "--image", OPTIONS.image, "--parallelism", "2", "--sub-path", "team/sweep");
}

describe("fleetsim sweep k8s", () => {
  it("prints an Indexed Job that the Kubernetes Job schema accepts: completions = points, requests from the preflight", async () => {
    const { dir } = await planned("  engine.workers.aggregated.parallelism.replicas: [1, 2, 3]");
    const r = await printJob(dir);
    expect(r.code, r.err).toBe(0);
    // Plain YAML: no anchors or aliases for the repeated labels.
    expect(r.out).not.toMatch(/[&*]a\d/);
    const doc = parse(r.out);
    // Throws with the failing path when the document breaks the schema.
    new Job(doc).validate();
    expect(doc.apiVersion).toBe("batch/v1");
    expect(doc.kind).toBe("Job");
    expect(doc.spec.completionMode).toBe("Indexed");
    expect(doc.spec.completions).toBe(3);
    expect(doc.spec.parallelism).toBe(2);
    expect(doc.spec.template.spec.restartPolicy).toBe("Never");
    const m = readManifest(dir, VERSION);
    const peak = Math.max(...m.points.map((p) => p.estimated_bytes));
    const c: Container = doc.spec.template.spec.containers[0];
    expect(c.resources.requests.memory).toBe(`${Math.ceil((peak * 1.25) / 2 ** 20)}Mi`);
    expect(c.resources.limits.memory).toBe(`${Math.ceil((peak * 2) / 2 ** 20)}Mi`);
    expect(c.resources.requests.cpu).toBe("1");
    expect(c.volumeMounts).toEqual([{ name: "sweep", mountPath: MOUNT_PATH, subPath: "team/sweep" }]);
    expect(doc.spec.template.spec.volumes).toEqual([
      { name: "sweep", persistentVolumeClaim: { claimName: "fleetsim-sweep" } },
    ]);
    // The same inputs print the same manifest.
    expect((await printJob(dir)).out).toBe(r.out);
  }, 60_000);

  it("the validator is real: documents that break the Job schema are refused", async () => {
    const { dir } = await planned("  engine.workers.aggregated.parallelism.replicas: [1]");
    const good = jobManifest(readManifest(dir, VERSION), OPTIONS) as {
      spec: Record<string, unknown> & { template: { spec: { containers: Record<string, unknown>[] } } };
    };
    new Job(good as never).validate();
    const broken = (edit: (j: typeof good) => void): unknown => {
      const j = structuredClone(good);
      edit(j);
      return j;
    };
    for (const bad of [
      broken((j) => {
        j.spec["completions"] = "1";
      }),
      broken((j) => {
        j.spec["completionMode"] = "Indexd";
      }),
      broken((j) => {
        delete j.spec.template.spec.containers[0]["name"];
      }),
    ]) {
      expect(() => new Job(bad as never).validate()).toThrow();
    }
  }, 30_000);

  it("its pods' commands, run locally index by index, complete the sweep with the same results as a local run", async () => {
    const { dir, root } = await planned(`  engine.workers.aggregated.parallelism.replicas: [1, 2]
  router.policy: [round_robin, kv_router]`);
    const job = jobManifest(readManifest(dir, VERSION), OPTIONS) as {
      spec: { completions: number; template: { spec: { containers: Container[] } } };
    };
    const c = job.spec.template.spec.containers[0];
    // The volume: the sweep directory seen at a path of its own, as a pod's mount would show it.
    const volume = mkdtempSync(join(tmpdir(), "fleetsim-pvc-"));
    const mount = join(volume, "sweep");
    symlinkSync(dir, mount);
    const args = c.args.map((a) => (a === MOUNT_PATH ? mount : a));
    expect(args).toEqual(["sweep", "run", mount]);
    const pods = Array.from({ length: job.spec.completions }, (_, i) =>
      fleetsimProcess(args, { JOB_COMPLETION_INDEX: String(i) }),
    );
    for (const pod of await Promise.all(pods)) expect(pod.code, pod.err).toBe(0);
    const podResults = readdirSync(join(dir, "results")).sort();
    const byPod = podResults.map((f) => readFileSync(join(dir, "results", f), "utf8"));

    // The same plan run here in one command.
    const local = join(root, "local");
    cpSync(dir, local, { recursive: true });
    rmSync(join(local, "results"), { recursive: true });
    expect((await cli("sweep", "run", local, "--parallel", "2")).code).toBe(0);
    expect(readdirSync(join(local, "results")).sort()).toEqual(podResults);
    expect(podResults.map((f) => readFileSync(join(local, "results", f), "utf8"))).toEqual(byPod);
  }, 120_000);
});

describe("the image's Dockerfile", () => {
  it("builds FROM node:20-slim, installs the tarball npm pack writes, runs fleetsim", () => {
    const text = dockerfile(VERSION);
    const instructions = text
      .split("\n")
      .filter((l) => l.trim() !== "" && !l.startsWith("#"))
      .map((l) => {
        const m = /^([A-Z]+)\s+(.*)$/.exec(l);
        expect(m, `not an instruction: ${l}`).not.toBeNull();
        return { op: (m as RegExpExecArray)[1], arg: (m as RegExpExecArray)[2] };
      });
    const KNOWN = new Set(["FROM", "COPY", "RUN", "USER", "WORKDIR", "ENTRYPOINT", "CMD", "ENV", "LABEL"]);
    for (const i of instructions) expect(KNOWN.has(i.op), i.op).toBe(true);
    expect(instructions[0]).toEqual({ op: "FROM", arg: "node:20-slim" });
    // The name npm pack gives this package's tarball (asked of npm itself, without building).
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    ) as { filename: string }[];
    const tarball = packed[0].filename;
    expect(instructions).toContainEqual({ op: "COPY", arg: `${tarball} /tmp/${tarball}` });
    const run = instructions.find((i) => i.op === "RUN");
    expect(run?.arg).toContain(`npm install --global --omit=dev /tmp/${tarball}`);
    // Exec form: JSON arrays, as Docker parses them.
    const entry = instructions.find((i) => i.op === "ENTRYPOINT");
    expect(JSON.parse(entry?.arg ?? "")).toEqual(["fleetsim"]);
    expect(JSON.parse(instructions.find((i) => i.op === "CMD")?.arg ?? "")).toEqual(["--help"]);
  }, 60_000);

  it("sweep k8s --dockerfile writes it", async () => {
    const { dir, root } = await planned("  engine.workers.aggregated.parallelism.replicas: [1]");
    const path = join(root, "Dockerfile");
    const r = await cli("sweep", "k8s", dir, "--image", "x:1", "--parallelism", "1", "--dockerfile", path);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(path, "utf8")).toBe(dockerfile(VERSION));
  }, 30_000);
});
