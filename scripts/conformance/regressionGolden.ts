/**
 * npm run conformance:regression — the golden of the Planner's regression
 * (test/golden/reference-planner/regression.json): runs scripts/reference/regression.py in the
 * reference environment (`npm run reference:setup`) and writes its output there.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const out = execFileSync(join(ROOT, ".reference", "venv", "bin", "python"), [
  join(ROOT, "scripts", "reference", "regression.py"),
]);
const target = join(ROOT, "test", "golden", "reference-planner", "regression.json");
writeFileSync(target, out);
// Keep the file as the project's formatter writes it, so `biome check` stays clean.
execFileSync(join(ROOT, "node_modules", ".bin", "biome"), ["format", "--write", target], { stdio: "ignore" });
console.log(`wrote ${target} (${out.length} bytes)`);
