/**
 * The CLI runs the compiled `dist/`, where the worker is `worker.js` started without tsx. Compiles
 * src/ to a scratch folder inside the repository (so `node_modules` resolves) and runs a sweep from
 * it in a plain `node` process.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { runSync } from "../helpers/process.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
mkdirSync(join(ROOT, ".tmp"), { recursive: true });
const out = mkdtempSync(join(ROOT, ".tmp", "sweep-dist-"));
afterAll(() => rmSync(out, { recursive: true, force: true }));

it("runs replay jobs in parallel workers from compiled JavaScript", () => {
  const tsc = runSync(
    [
      process.execPath,
      join(ROOT, "node_modules/typescript/bin/tsc"),
      "-p",
      "tsconfig.build.json",
      "--outDir",
      out,
    ],
    { cwd: ROOT },
  );
  expect(tsc.out + tsc.err).toBe("");
  const script = join(out, "check.mjs");
  writeFileSync(
    script,
    `import { loadConfig } from "./config/load.js";
import { sweep } from "./pipeline/sweepTasks.js";
const spec = loadConfig({ configPath: "examples/aggregated.yaml", sets: [], stack: "dynamo" });
const job = { spec, capturePerRequest: false };
const replay = await sweep([job, job], { maxParallel: 2, timeoutMs: 60000, task: "replay" });
console.log(JSON.stringify({
  replay: replay.results.map((r) => (r.status === "ok" ? r.value.summary.completed_requests : r)),
  processes: replay.processesStarted,
}));
`,
  );
  const run = runSync([process.execPath, script], { cwd: ROOT, timeout: 60_000 });
  expect(run.err).toBe("");
  expect(JSON.parse(run.out)).toEqual({ replay: [315, 315], processes: 2 });
});
