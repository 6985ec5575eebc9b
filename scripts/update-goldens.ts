/**
 * Regenerates the golden prediction.json files that test/output/golden.test.ts compares against
 * (run: `node --import tsx scripts/update-goldens.ts [name ...]`; no names = every case).
 *
 * Each case of test/golden/cases.ts is run through the CLI in process, its host-time keys
 * (`HOST_TIME_PATHS`) are stripped, and the rest is written to test/golden/<name>.prediction.json,
 * then laid out by the repository's formatter (`biome format`, so `npm run lint` passes; the test
 * compares parsed values and key order, never whitespace). A golden whose content is unchanged is
 * left as it is.
 *
 * A golden may only change in a commit that explains why: name the cases that moved, which keys
 * moved and the cause (a bug fixed, a deliberate change of behaviour or of the output contract).
 * A refactor must leave every golden byte-identical; if this script changes one, the refactor
 * changed behaviour.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import {
  diffJson,
  GOLDEN_CASES,
  goldenPath,
  type Json,
  runCase,
  serializeGolden,
  stripHostTime,
} from "../test/golden/cases.js";

const wanted = process.argv.slice(2);
const unknown = wanted.filter((n) => !GOLDEN_CASES.some((c) => c.name === n));
if (unknown.length > 0) {
  console.error(
    `unknown case(s): ${unknown.join(", ")}; cases: ${GOLDEN_CASES.map((c) => c.name).join(", ")}`,
  );
  process.exit(2);
}
const written: string[] = [];
for (const c of GOLDEN_CASES) {
  if (wanted.length > 0 && !wanted.includes(c.name)) continue;
  const { doc } = await runCase(c);
  const golden = stripHostTime(doc);
  const path = goldenPath(c);
  let before: string | null = null;
  try {
    before = JSON.stringify(JSON.parse(readFileSync(path, "utf8")));
  } catch {
    before = null;
  }
  const rel = relative(process.cwd(), path);
  if (before === JSON.stringify(golden)) {
    console.log(`${rel}: unchanged`);
    continue;
  }
  writeFileSync(path, serializeGolden(golden));
  written.push(path);
  if (before === null) {
    console.log(`${rel}: written (new)`);
    continue;
  }
  const diffs = diffJson(JSON.parse(before) as Json, golden);
  console.log(
    `${rel}: CHANGED, ${diffs.length} path(s)${diffs.length === 0 ? " (key order or formatting)" : ""}`,
  );
  for (const d of diffs.slice(0, 20)) console.log(`  ${d}`);
  if (diffs.length > 20) console.log(`  … and ${diffs.length - 20} more`);
}
if (written.length > 0) {
  const biome = join(import.meta.dirname, "..", "node_modules", ".bin", "biome");
  execFileSync(biome, ["format", "--write", ...written], { stdio: "inherit" });
}
