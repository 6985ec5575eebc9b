/**
 * `fleetsim sweep plan | run | merge` end to end (docs/sweep.md): a plan's points run all at once,
 * one shard index at a time in concurrent processes (duplicates included), or by a killed worker
 * and its rerun, always merge to the same bytes; a point's result is `predict`'s prediction of its
 * config; missing and damaged results are reported, temporaries ignored.
 */
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { recommendationSchema } from "../../src/output/recommendation.js";
import { cli, setFlags } from "../helpers/cli.js";
import { fleetsimProcess } from "../helpers/process.js";
import { tempDir } from "../helpers/specs.js";
import { sweepProject } from "../helpers/sweepProject.js";

/** Every file under `dir` (relative path → bytes), for byte-for-byte comparison of two trees. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const abs = join(entry.parentPath, entry.name);
    out[abs.slice(dir.length + 1)] = readFileSync(abs, "utf8");
  }
  return out;
}

function manifest(dir: string): { points: { index: number; hash: string }[]; manifest_hash: string } {
  return JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
}

describe("fleetsim sweep", () => {
  it("plans the issue's sweep file, runs every point and merges; parallel, per-index and duplicate runs merge to the same bytes", async () => {
    const p = sweepProject();
    const dir = join(p.dir, "plan");
    const plan = await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir);
    expect(plan.err).toBe("");
    expect(plan.code).toBe(0);
    expect(plan.out).toContain("Planned 6 points");
    // router.policy needs the Dynamo stack: inferred from the axis.
    expect(plan.out).toContain("stack dynamo");
    const m = manifest(dir);
    expect(m.points.map((x) => x.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(new Set(m.points.map((x) => x.hash)).size).toBe(6);

    // 1. Every point here, two worker processes.
    const all = await cli("sweep", "run", dir, "--parallel", "2");
    expect(all.code).toBe(0);
    expect(all.out).toContain("6 points: 6 run, 0 already had a result, 0 failed");
    const out1 = join(p.dir, "out1");
    const merged = await cli("sweep", "merge", dir, "-o", out1);
    expect(merged.code).toBe(0);
    expect(merged.out).toContain("fleetsim recommendations");
    const sequentialResults = tree(join(dir, "results"));
    expect(Object.keys(sequentialResults).sort()).toEqual(m.points.map((x) => `${x.hash}.json`).sort());

    // 2. The same plan, each index in its own process as pods would run it, all at once, with a
    //    duplicate pod for index 3 and the index from each scheduler's variable.
    rmSync(join(dir, "results"), { recursive: true });
    const runs = await Promise.all([
      fleetsimProcess(["sweep", "run", dir], { JOB_COMPLETION_INDEX: "0" }),
      fleetsimProcess(["sweep", "run", dir], { SLURM_ARRAY_TASK_ID: "1" }),
      fleetsimProcess(["sweep", "run", dir], { AWS_BATCH_JOB_ARRAY_INDEX: "2" }),
      fleetsimProcess(["sweep", "run", dir, "--index", "3"]),
      fleetsimProcess(["sweep", "run", dir, "--index", "3"]),
      fleetsimProcess(["sweep", "run", dir, "--index", "4"]),
      fleetsimProcess(["sweep", "run", dir], { JOB_COMPLETION_INDEX: "5" }),
    ]);
    for (const r of runs) expect(r.code, r.err).toBe(0);
    expect(runs[1].out).toContain("point 1 (SLURM_ARRAY_TASK_ID)");
    expect(tree(join(dir, "results"))).toEqual(sequentialResults);
    const out2 = join(p.dir, "out2");
    expect((await cli("sweep", "merge", dir, "-o", out2)).code).toBe(0);
    expect(tree(out2)).toEqual(tree(out1));

    // 3. A rerun of a finished index does nothing and changes nothing.
    const again = await cli("sweep", "run", dir, "--index", "2");
    expect(again.out).toContain("0 run, 1 already had a result");
    expect(tree(join(dir, "results"))).toEqual(sequentialResults);

    // The merged files: a row per point in plan order, recommend's document, runnable YAMLs, the page.
    const files = tree(out1);
    const csv = files["sweep.csv"].trim().split("\n");
    expect(csv[0]).toMatch(
      /^index,point_hash,engine\.workers\.aggregated\.parallelism\.replicas,router\.policy,status,rank,score,used_gpus,/,
    );
    expect(csv.slice(1).map((l) => l.split(",").slice(0, 4).join(","))).toEqual(
      m.points.map(
        (x, i) => `${i},${x.hash},${[1, 1, 2, 2, 3, 3][i]},${i % 2 === 0 ? "round_robin" : "kv_router"}`,
      ),
    );
    const rec = recommendationSchema.parse(JSON.parse(files["recommendation.json"]));
    expect(rec.candidates.map((c) => c.candidate_id)).toEqual(
      m.points.map((_, i) => `candidate-${String(i).padStart(6, "0")}`),
    );
    expect(rec.views.top_n.length).toBe(6);
    expect(Object.keys(files).filter((f) => f.startsWith("recommendations/")).length).toBe(6);
    expect(files["compare.html"]).toContain("<html");
    expect(files["compare.html"]).toContain("#1 point");
    // Nothing host-specific in the merged output: no absolute path of the sweep directory.
    for (const text of Object.values(files)) expect(text).not.toContain(p.dir);
  }, 120_000);

  it("a point's result is predict's prediction of the point's config (host-time keys aside)", async () => {
    const p = sweepProject("  engine.workers.aggregated.parallelism.replicas: [2]");
    const dir = join(p.dir, "plan");
    expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir)).code).toBe(0);
    expect((await cli("sweep", "run", dir, "--index", "0")).code).toBe(0);
    const [point] = manifest(dir).points;
    const result = JSON.parse(readFileSync(join(dir, "results", `${point.hash}.json`), "utf8"));
    const out = join(p.dir, "predict");
    const predicted = await cli(
      "predict",
      "-c",
      p.baseFile,
      "--stack",
      "engine",
      ...setFlags(
        "traffic.stop.max_virtual_time_seconds=300",
        "engine.workers.aggregated.parallelism.replicas=2",
      ),
      "--output-dir",
      out,
    );
    expect(predicted.code).toBe(0);
    const doc = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
    for (const k of HOST_TIME_KEYS) {
      expect(result.prediction.summary[k]).toBeUndefined();
      expect(result.prediction[k]).toBeUndefined();
      delete doc.summary[k];
      // The engine stack's top-level copy (docs/output.md "Layout").
      delete doc[k];
    }
    expect(result.prediction).toEqual(doc);
    expect(result.prediction.run.topology.aggregated.replicas).toBe(2);
  }, 60_000);

  it("a worker killed mid-point leaves no result; merge ignores its temporary and lists the missing point", async () => {
    // Point 1 is long (2,000,000 closed-loop requests): killed while it replays.
    const p = sweepProject("  traffic.stop.requests: [50, 2000000]");
    const dir = join(p.dir, "plan");
    const traffic =
      "traffic={source: {type: synthetic, input_tokens: 2048, output_tokens: 1024}, load: {type: concurrency, concurrency: 256}, stop: {}}";
    expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir, "--set", traffic)).code).toBe(0);
    const m = manifest(dir);
    expect((await cli("sweep", "run", dir, "--index", "0")).code).toBe(0);
    // What a worker killed while writing leaves: a partial temporary (never a <hash>.json).
    const results = join(dir, "results");
    writeFileSync(join(results, `.${m.points[1].hash}.4242.1.tmp`), '{"schema": "fleetsim.sweep-res');
    // Killed 1.5 s into the point's replay (it would take minutes).
    const killed = await fleetsimProcess(
      ["sweep", "run", dir, "--index", "1"],
      {},
      {
        killAfterLine: { text: "running point 1", ms: 1500 },
      },
    );
    expect(killed.signal).toBe("SIGKILL");
    expect(readdirSync(results).filter((f) => f.endsWith(".json"))).toEqual([`${m.points[0].hash}.json`]);
    // A pod's SIGTERM (eviction): exit 143 at once, nothing of the point published.
    const evicted = await fleetsimProcess(
      ["sweep", "run", dir, "--index", "1"],
      {},
      {
        killAfterLine: { text: "running point 1", ms: 1000, signal: "SIGTERM" },
      },
    );
    expect(evicted.code).toBe(143);
    expect(readdirSync(results).filter((f) => f.endsWith(".json"))).toEqual([`${m.points[0].hash}.json`]);
    const out = join(p.dir, "out");
    const incomplete = await cli("sweep", "merge", dir, "-o", out);
    expect(incomplete.code).toBe(2);
    expect(incomplete.err).toContain("1 of 2 points have no result yet: 1;");
    expect(incomplete.err).not.toContain("    at ");
    expect(() => readdirSync(out)).toThrow();
    // --allow-missing merges what is there.
    const partial = await cli("sweep", "merge", dir, "-o", out, "--allow-missing");
    expect(partial.code).toBe(0);
    expect(readFileSync(join(out, "sweep.csv"), "utf8")).toContain(`1,${m.points[1].hash},2000000,missing`);
    // The finished point is not run again.
    expect((await cli("sweep", "run", dir, "--index", "0")).out).toContain("0 run, 1 already had a result");
  }, 90_000);

  it("a damaged result is named, not merged (exit 2)", async () => {
    const p = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1]");
    const dir = join(p.dir, "plan");
    expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir)).code).toBe(0);
    const [point] = manifest(dir).points;
    writeFileSync(join(dir, "results", `${point.hash}.json`), '{"schema": ');
    const r = await cli("sweep", "merge", dir, "-o", join(p.dir, "out"));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`results/${point.hash}.json (point 0): not valid JSON`);
  });

  it("refuses bad input before anything is written (exit 2, the file and line named)", async () => {
    const p = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1, 0]");
    const dir = join(p.dir, "plan");
    const bad = await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("in point 1 (engine.workers.aggregated.parallelism.replicas=0)");
    expect(bad.err).toContain(
      "(from sweep.yaml line 6: vary engine.workers.aggregated.parallelism.replicas=0)",
    );
    expect(() => readdirSync(dir)).toThrow();

    // Two points of one configuration (the second axis overwrites what the first varies):
    // refused, nothing written.
    const dup = sweepProject(`  engine.workers.aggregated.parallelism: [{replicas: 1}, {replicas: 2}]
  engine.workers.aggregated.parallelism.replicas: [3]`);
    const dupDir = join(dup.dir, "plan");
    const d = await cli("sweep", "plan", "-c", dup.sweepFile, "-o", dupDir);
    expect(d.code).toBe(2);
    expect(d.err).toContain("is the same configuration as point 0");
    expect(() => readdirSync(dupDir)).toThrow();

    const typo = sweepProject("  engine.workers.aggregated.parallelism.replicas: {choices: []}");
    const r = await cli("sweep", "plan", "-c", typo.sweepFile, "-o", join(typo.dir, "plan"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /vary\.engine\.workers\.aggregated\.parallelism\.replicas\.choices\n {2}Input should be a non-empty list.*\(line 6, column/,
    );

    // An index outside the plan, and a Redis that does not answer (test/redis/ runs a real one).
    const ok = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1, 2]");
    const okDir = join(ok.dir, "plan");
    expect((await cli("sweep", "plan", "-c", ok.sweepFile, "-o", okDir)).code).toBe(0);
    const outside = await cli("sweep", "run", okDir, "--index", "2");
    expect(outside.code).toBe(2);
    expect(outside.err).toContain("--index=2: the plan has 2 points (indices 0 to 1)");
    const redis = await cli("sweep", "run", okDir, "--executor", "redis://127.0.0.1:1");
    expect(redis.code).toBe(2);
    expect(redis.err).toContain("cannot reach Redis at redis://127.0.0.1:1");
    // A plan over a plan needs --overwrite; it keeps the results.
    expect((await cli("sweep", "plan", "-c", ok.sweepFile, "-o", okDir)).code).toBe(2);
    expect((await cli("sweep", "run", okDir, "--index", "1")).code).toBe(0);
    expect((await cli("sweep", "plan", "-c", ok.sweepFile, "-o", okDir, "--overwrite")).code).toBe(0);
    expect((await cli("sweep", "run", okDir, "--index", "1")).out).toContain("1 already had a result");
    // A malformed executor is refused before any work, also when there is nothing left to run.
    const late = await cli("sweep", "run", okDir, "--index", "1", "--executor", "redis://");
    expect(late.code).toBe(2);
    expect(late.err).toContain("--executor redis://");
  }, 60_000);

  it("an edited manifest is refused: a changed point by its own hash, the whole document by manifest_hash, another version's plan", async () => {
    const p = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1, 2]");
    const dir = join(p.dir, "plan");
    expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir)).code).toBe(0);
    const path = join(dir, "manifest.json");
    const original = readFileSync(path, "utf8");
    const doc = JSON.parse(original);
    doc.points[1].set[1].value = 5; // replicas 2 → 5: no longer the planned point
    writeFileSync(path, JSON.stringify(doc));
    const one = await cli("sweep", "run", dir, "--index", "1");
    expect(one.code).toBe(2);
    expect(one.err).toContain("no longer makes point 1");
    const all = await cli("sweep", "merge", dir, "-o", join(p.dir, "out"));
    expect(all.code).toBe(2);
    expect(all.err).toContain("does not match its manifest_hash");
    writeFileSync(path, original.replace('"fleetsim_version": "', '"fleetsim_version": "0.0.0-'));
    const version = await cli("sweep", "run", dir);
    expect(version.code).toBe(2);
    expect(version.err).toMatch(/was planned with fleetsim 0\.0\.0-.*; this is fleetsim/);
    writeFileSync(path, original.slice(0, 200));
    expect((await cli("sweep", "run", dir, "--index", "0")).err).toContain("is not valid JSON (cut short?)");
  }, 60_000);

  it("checks a point's inputs before it runs: a changed trace is refused, a moved sweep directory still runs", async () => {
    const p = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1]", "inputs: reference\n");
    const dir = join(p.dir, "plan");
    expect((await cli("sweep", "plan", "-c", p.sweepFile, "-o", dir)).code).toBe(0);
    writeFileSync(
      p.trace,
      `${readFileSync(p.trace, "utf8")}${JSON.stringify({ timestamp: 5000, input_length: 10, output_length: 2, hash_ids: [1] })}\n`,
    );
    const r = await cli("sweep", "run", dir, "--index", "0");
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${p.trace}: the sweep's input file changed since the plan`);

    // Copied inputs travel with the directory: a pod mounts it anywhere.
    const c = sweepProject("  engine.workers.aggregated.parallelism.replicas: [1]");
    const planned = join(c.dir, "plan");
    expect((await cli("sweep", "plan", "-c", c.sweepFile, "-o", planned)).code).toBe(0);
    const moved = join(tempDir("fleetsim-sweep-moved-"), "mnt");
    cpSync(planned, moved, { recursive: true });
    rmSync(c.trace);
    const run = await cli("sweep", "run", moved, "--index", "0");
    expect(run.err).not.toContain("error");
    expect(run.code).toBe(0);
  }, 60_000);
});
