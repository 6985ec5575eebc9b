#!/usr/bin/env node
// Package smoke test (run by .ci/run after the tests): packs fleetsim as npm would publish it,
// unpacks it as a dependency of a throw-away consumer under .tmp/, and uses it the way a user
// does: the library API through the package entry, and the `fleetsim` binary. Dependencies
// resolve through the repository's node_modules (the consumer lives below it), so no network.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
mkdirSync(join(root, ".tmp"), { recursive: true });
const consumer = mkdtempSync(join(root, ".tmp", "consumer-"));
try {
  // dist/ is already built (npm ci runs `prepare`); pack it as is.
  execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", consumer], {
    cwd: root,
    stdio: "ignore",
  });
  const tarball = readdirSync(consumer).find((f) => f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error("npm pack wrote no tarball");
  const installed = join(consumer, "node_modules", "fleetsim");
  mkdirSync(installed, { recursive: true });
  execFileSync("tar", ["-xzf", join(consumer, tarball), "-C", installed, "--strip-components=1"]);

  writeFileSync(join(consumer, "package.json"), JSON.stringify({ type: "module", private: true }));
  writeFileSync(
    join(consumer, "use.js"),
    `import { ConfigError, runSyntheticTraceReplay, renderHtmlReport } from "fleetsim";
const report = await runSyntheticTraceReplay({
  inputTokens: 512, outputTokens: 64, requestCount: 200, requestRate: 20,
  extraEngineArgs: { max_num_seqs: 64 }, numWorkers: 2, slaTtftMs: 1000, slaItlMs: 50,
});
const doc = report.toDict();
if (doc.summary.completed_requests !== 200) throw new Error("expected 200 completed requests");
if (!renderHtmlReport(doc).includes("echarts")) throw new Error("the report lacks its charts bundle");
let refused = false;
try { await runSyntheticTraceReplay({ inputTokens: 1, outputTokens: 1, requestCount: 1, numWorkrs: 2 }); }
catch (err) { refused = err instanceof ConfigError && err.message.includes("numWorkers"); }
if (!refused) throw new Error("a misspelled option was not a ConfigError with a suggestion");
console.log("library API: ok");
`,
  );
  execFileSync(process.execPath, ["use.js"], { cwd: consumer, stdio: "inherit" });
  const version = execFileSync(process.execPath, [join(installed, "dist", "cli", "bin.js"), "--version"], {
    encoding: "utf8",
  }).trim();
  console.log(`fleetsim binary: ${version}`);
  // The binary is the bundled CLI (scripts/build-cli.mjs): a run reads the op tables and the
  // report's charts asset from the installed package's dist/, as the bundle finds them there.
  const out = join(consumer, "out");
  execFileSync(
    process.execPath,
    [
      join(installed, "dist", "cli", "bin.js"),
      "predict",
      "-c",
      join(installed, "examples", "aggregated.yaml"),
    ].concat(["--output-dir", out, "--html", "--format", "json", "--progress", "none"]),
    { cwd: consumer, stdio: "ignore" },
  );
  const prediction = JSON.parse(readFileSync(join(out, "prediction.json"), "utf8"));
  if (prediction.summary.completed_requests <= 0) throw new Error("the binary's run completed no request");
  if (!readFileSync(join(out, "report.html"), "utf8").includes("echarts")) {
    throw new Error("the binary's report lacks its charts bundle");
  }
  console.log("fleetsim binary: predict --html ok");
} finally {
  rmSync(consumer, { recursive: true, force: true });
}
