/**
 * `npm run bench:fidelity`: replays every real-hardware experiment of bench/fidelity/experiments
 * through fleetsim and prints predicted vs measured and MAPE per metric, by split, model kind,
 * family and load regime (docs/fidelity.md).
 *
 * Usage: node --import tsx bench/fidelity/run.ts [--split fit|heldout|all] [--only SUBSTR]
 *          [--json FILE] [--baseline FILE] [--quiet]
 *
 * `--json` writes every result; `--baseline` reads such a file from an earlier run (another
 * commit) and prints each group's MAPE as "before → after".
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadExperiments } from "./experiment.js";
import { breakdown, type ExperimentResult, METRICS, score } from "./score.js";
import { simulate } from "./simulate.js";

const USAGE =
  "usage: npm run bench:fidelity -- [--split fit|heldout|all] [--only SUBSTR] [--json FILE] [--baseline FILE] [--op-tables vllm|backend] [--quiet]";

/** The options, or a usage line and exit 2 for a mistyped one (no stack trace for a user mistake). */
function options() {
  try {
    const { values } = parseArgs({
      options: {
        split: { type: "string", default: "all" },
        only: { type: "string" },
        json: { type: "string" },
        baseline: { type: "string" },
        // `timing.op_tables` of every run (docs/backends.md "Timing"): the SGLang and TensorRT-LLM
        // rows priced from their backends' own tables instead of vLLM's.
        "op-tables": { type: "string", default: "vllm" },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    if (!["fit", "heldout", "all"].includes(values.split))
      throw new Error(`--split must be fit, heldout or all, not '${values.split}'`);
    if (!["vllm", "backend"].includes(values["op-tables"]))
      throw new Error(`--op-tables must be vllm or backend, not '${values["op-tables"]}'`);
    return values;
  } catch (err) {
    process.stderr.write(`bench:fidelity: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
}
const values = options();

const fmt = (x: number | null | undefined, d = 1): string =>
  x === null || x === undefined || !Number.isFinite(x) ? "—" : x.toFixed(d);

async function main(): Promise<void> {
  const all = loadExperiments().filter(
    (e) =>
      (values.split === "all" || e.split === values.split) &&
      (values.only === undefined || e.id.includes(values.only)),
  );
  const results: ExperimentResult[] = [];
  const started = process.cpuUsage();
  for (const e of all) {
    const predicted = await simulate(
      e,
      values["op-tables"] === "backend"
        ? { workerOverrides: { timing: { type: "default", op_tables: "backend" } } }
        : {},
    );
    const r = score(e, predicted);
    results.push(r);
    if (!values.quiet) {
      const cells = METRICS.map(
        ({ key, label }) =>
          `${label} ${fmt(predicted[key])}/${fmt(e.measured[key])} (${fmt(r.ape[key], 0)}%)`,
      );
      console.log(
        `${e.split.padEnd(7)} ${e.id.padEnd(44)} ${cells.join("  ")}${r.collapsed ? "  COLLAPSED" : ""}`,
      );
    }
  }
  const cpu = process.cpuUsage(started);
  console.log("");
  console.log(`| group | n | ${METRICS.map((m) => m.label).join(" | ")} |`);
  console.log(`| --- | --- | ${METRICS.map(() => "---").join(" | ")} |`);
  const before = new Map(
    values.baseline === undefined
      ? []
      : breakdown(JSON.parse(readFileSync(values.baseline, "utf8")) as ExperimentResult[]).map((g) => [
          g.group,
          g,
        ]),
  );
  for (const g of breakdown(results)) {
    const b = before.get(g.group);
    const cell = (key: (typeof METRICS)[number]["key"]): string =>
      b === undefined ? fmt(g.mape[key]) : `${fmt(b.mape[key])} → ${fmt(g.mape[key])}`;
    console.log(`| ${g.group} | ${g.experiments} | ${METRICS.map((m) => cell(m.key)).join(" | ")} |`);
  }
  const collapsed = results.filter((r) => r.collapsed).map((r) => r.id);
  console.log(
    `\ncollapsed (TTFT > 3× measured and > 1 s, or flagged saturated): ${collapsed.length === 0 ? "none" : collapsed.join(", ")}`,
  );
  console.log(`${results.length} experiments, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU`);
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(results, null, 1)}\n`);
}

await main();
