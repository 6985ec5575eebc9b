/**
 * The output directory through the `fleetsim` process (issue 13 §1–4): a full disk, two runs into
 * one directory, a signal during the write phase, and directories that cannot take results.
 * The full-disk and read-only cases mount a small tmpfs in a private user + mount namespace
 * (`unshare -rm`, util-linux), so they need no privileges; without unshare they fail loudly.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fleetsimArgv, type ProcessRun, predictArgv, runProcess } from "../helpers/process.js";
import { syntheticProject, tempDir } from "../helpers/specs.js";

const BIN = fleetsimArgv([]);

/** A synthetic-traffic config of `requests` requests (test/helpers/specs.ts), its own temp dir. */
function syntheticConfig(requests: number): string {
  // Building a large per-request report can outlast the default 5 s shutdown bound on a busy host.
  return syntheticProject(requests, "execution: {resources: {shutdown_timeout_seconds: 300}}\n").config;
}

/** Runs `script` (sh) in a private user + mount namespace with a tmpfs mounted on `$MNT`. */
function inNamespace(mnt: string, mountOptions: string, script: string): Promise<ProcessRun> {
  const probe = spawnSync("unshare", ["-rm", "true"]);
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `this test needs 'unshare -rm' (util-linux, unprivileged user namespaces): ${probe.error?.message ?? probe.stderr}`,
    );
  }
  return runProcess([
    "unshare",
    "-rm",
    "sh",
    "-c",
    `mount -t tmpfs -o ${mountOptions} tmpfs "$MNT" && ${script}`.replace(/\$MNT/g, mnt),
  ]);
}

const CLI = BIN.map((a) => `'${a}'`).join(" ");

describe("fleetsim predict: the output directory", () => {
  it("a full disk: exit 1 with a message, no half-written report, the previous outputs untouched", async () => {
    const mnt = tempDir();
    // report.html (~0.7 MB) does not fit in 512 KB; an old run's outputs sit there already.
    const r = await inNamespace(
      mnt,
      "size=512k",
      `mkdir "$MNT/out" && echo old > "$MNT/out/prediction.json" && echo old > "$MNT/out/report.html" &&
       ${CLI} predict -c examples/aggregated.yaml --html --output-dir "$MNT/out" --overwrite --progress none;
       echo "rc=$?"; ls -A "$MNT/out"; cat "$MNT/out/prediction.json" "$MNT/out/report.html"`,
    );
    expect(r.out).toContain("rc=1");
    expect(r.err).toMatch(/^fleetsim: error: could not write the results to .*out: no space left on device/m);
    expect(r.err).not.toContain("OutputWriteError");
    expect(r.err).not.toContain("    at ");
    expect(r.out).not.toContain("Saved HTML report");
    // Only the old files (and no temporaries) remain, with their old content.
    const listing = r.out.split("rc=1")[1].trim().split("\n");
    expect(listing).toEqual(["prediction.json", "report.html", "old", "old"]);
  }, 60_000);

  it("a read-only file system is refused before the run: exit 2", async () => {
    const mnt = tempDir();
    const r = await inNamespace(
      mnt,
      "size=1m,ro",
      `${CLI} predict -c examples/aggregated.yaml --output-dir "$MNT/out" --progress none; echo "rc=$?"`,
    );
    expect(r.out).toContain("rc=2");
    expect(r.err).toMatch(/cannot (write to|create) output directory .*: read-only file system/);
  }, 60_000);

  it("two runs into one directory: one wins, the other gets exit 2; the directory holds one whole run", async () => {
    const dir = tempDir();
    const small = syntheticConfig(200);
    const large = syntheticConfig(300);
    for (let trial = 0; trial < 4; trial++) {
      const out = join(dir, `out-${trial}`);
      const args = (config: string) => [...BIN, ...predictArgv(config, out, "--capture-per-request")];
      const [a, b] = await Promise.all([runProcess(args(small)), runProcess(args(large))]);
      expect([a.code, b.code].sort(), `${a.err}\n${b.err}`).toEqual([0, 2]);
      const loser = a.code === 2 ? a : b;
      expect(loser.err).toMatch(/is in use by another fleetsim run|is not empty/);
      const prediction = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
      const lines = readFileSync(join(out, "requests.jsonl"), "utf8").trim().split("\n").length;
      expect(lines).toBe(prediction.summary.num_requests);
      expect(readdirSync(out).sort()).toEqual(["prediction.json", "requests.jsonl", "resource-runtime.json"]);
    }
  }, 120_000);

  it("SIGTERM during the write phase: exit 143, nothing of the run left, the lock released", async () => {
    const dir = tempDir();
    const config = syntheticConfig(150_000);
    const out = join(dir, "out");
    let sent = false;
    const r = await runProcess([...BIN, ...predictArgv(config, out, "--capture-per-request")], {
      onSpawn: (pid) => {
        // Poll for the staging folder (the write phase) and send SIGTERM then.
        const timer = setInterval(() => {
          try {
            if (readdirSync(out).some((n) => n.startsWith(".fleetsim-stage."))) {
              process.kill(pid, "SIGTERM");
              sent = true;
              clearInterval(timer);
            }
          } catch {
            // not there yet
          }
        }, 2);
        setTimeout(() => clearInterval(timer), 60_000);
      },
    });
    expect(sent).toBe(true);
    expect(r.code).toBe(143);
    expect(r.err).toContain("interrupted (SIGTERM); no results were written");
    // The run created the directory: with nothing of it left, the directory is gone too.
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it("SIGINT before the replay ends, into a directory with an old run: exit 130, the old run untouched", async () => {
    const dir = tempDir();
    const out = join(dir, "out");
    mkdirSync(out);
    writeFileSync(join(out, "prediction.json"), "old");
    const config = syntheticConfig(2_000_000);
    const r = await runProcess([...BIN, ...predictArgv(config, out, "--overwrite")], {
      onSpawn: (pid) => {
        const timer = setInterval(() => {
          if (existsSync(join(out, ".fleetsim.lock"))) {
            setTimeout(() => process.kill(pid, "SIGINT"), 500);
            clearInterval(timer);
          }
        }, 5);
      },
    });
    expect(r.code).toBe(130);
    expect(readdirSync(out)).toEqual(["prediction.json"]);
    expect(readFileSync(join(out, "prediction.json"), "utf8")).toBe("old");
  }, 120_000);

  it("an empty --output-dir and a prediction.json that is a directory are exit 2 before the run", async () => {
    const a = await runProcess([...BIN, ...predictArgv("examples/aggregated.yaml", "")]);
    expect(a.code).toBe(2);
    expect(a.err).toContain("must not be empty");
    const out = join(tempDir(), "out");
    mkdirSync(join(out, "prediction.json"), { recursive: true });
    const b = await runProcess([...BIN, ...predictArgv("examples/aggregated.yaml", out, "--overwrite")]);
    expect(b.code).toBe(2);
    expect(b.err).toMatch(/prediction\.json is a directory/);
    expect(b.err).not.toContain("    at ");
  }, 60_000);
});
