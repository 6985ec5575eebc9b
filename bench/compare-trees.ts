/**
 * `node --import tsx bench/compare-trees.ts BASE_DIR NEW_DIR [ROUNDS]`: CPU time (user+sys) of the
 * replay alone, the same cases in two checkouts of fleetsim (e.g. `git worktree add /tmp/base
 * <commit>`, node_modules linked), loaded into one process and interleaved round by round (the
 * order alternates), so machine noise hits both alike. Prints the median per case and the
 * new/base ratios (median, min). `CASES=a,b` picks cases. Needs the FAST'25 conversation trace
 * beside the repository (../shared). Trees from before the pipeline/ folder (src/run.ts) load too.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";

const [baseRoot, newRoot, roundsArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 7);
const trace = resolve("../shared/traces/mooncake-fast25/conversation_trace.jsonl");
/** What the bench needs of one checkout (its modules are loaded by path, so typed loosely here). */
interface Tree {
  readonly cases: Record<string, { spec: unknown; table: unknown; timings: unknown }>;
  createPlanner(spec: unknown, timings: unknown): Promise<unknown>;
  readonly Replay: new (
    spec: unknown,
    table: unknown,
    timings: unknown,
    opts: { capturePerRequest: boolean; scaling: unknown },
  ) => { runSync(): { passes: number } };
}

async function load(root: string): Promise<Tree> {
  // Before the pipeline/ folder the workload loader was src/run.ts and the timing factory src/timing/.
  const layout = existsSync(resolve(root, "src/pipeline/index.ts")) ? "new" : "old";
  const cfg = await import(resolve(root, "src/config/load.ts"));
  const wl = await import(resolve(root, layout === "old" ? "src/run.ts" : "src/pipeline/index.ts"));
  const tim = await import(
    resolve(root, layout === "old" ? "src/timing/index.ts" : "src/pipeline/timings.ts")
  );
  const rep = await import(resolve(root, "src/sim/replay.ts"));
  const pl = await import(resolve(root, "src/autoscale/plannerSetup.ts"));
  const spec = (config: string, planner: boolean, ...sets: string[]): { engine: unknown } =>
    cfg.loadConfig({
      configPath: resolve(root, config),
      sets: [
        `traffic.source.paths=[${JSON.stringify(trace)}]`,
        ...(planner ? [] : ["planner={policy: disabled}"]),
        ...sets,
      ],
      stack: "dynamo",
    });
  const AGG = "examples/seed-aggregated.yaml";
  const DIS = "examples/seed-disaggregated.yaml";
  const specs: Record<string, () => { engine: unknown }> = {
    "agg 2w polynomial": () => spec(AGG, false, "engine.workers.aggregated.timing={type: polynomial}"),
    "agg 2w default": () => spec(AGG, false),
    "disagg 1P+1D": () => spec(DIS, false),
    "agg 4w round_robin": () => spec(AGG, false, "engine.workers.aggregated.parallelism.replicas=4"),
    "agg 4w kv_router": () =>
      spec(AGG, false, "engine.workers.aggregated.parallelism.replicas=4", "router={policy: kv_router}"),
    "agg 2w planner": () => spec(AGG, true),
    "disagg planner": () => spec(DIS, true),
  };
  const only = process.env["CASES"]?.split(",");
  const cases: Tree["cases"] = {};
  for (const [name, make] of Object.entries(specs)) {
    if (only !== undefined && !only.includes(name)) continue;
    const s = make();
    cases[name] = {
      spec: s,
      table: await wl.loadWorkload(s),
      timings: await tim.createRoleTimings(s.engine),
    };
  }
  return { cases, createPlanner: pl.createPlanner, Replay: rep.Replay };
}

if (baseRoot === undefined || newRoot === undefined) {
  console.error("usage: compare-trees.ts BASE_DIR NEW_DIR [ROUNDS]");
  process.exit(2);
}
const base = await load(baseRoot);
const next = await load(newRoot);
const cpuMs: Record<string, { base: number[]; next: number[] }> = {};
for (let round = 0; round < rounds; round++) {
  for (const name of Object.keys(base.cases)) {
    cpuMs[name] ??= { base: [], next: [] };
    const order = round % 2 === 0 ? (["base", "next"] as const) : (["next", "base"] as const);
    for (const side of order) {
      const tree = side === "base" ? base : next;
      const c = tree.cases[name];
      const planner = await tree.createPlanner(c.spec, c.timings);
      const before = process.cpuUsage();
      const result = new tree.Replay(c.spec, c.table, c.timings, {
        capturePerRequest: false,
        scaling: planner,
      }).runSync();
      const used = process.cpuUsage(before);
      if (result.passes <= 0) throw new Error(`${name}: no passes`);
      cpuMs[name][side].push((used.user + used.system) / 1000);
    }
  }
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)];
console.log(`rounds ${rounds}; CPU ms per replay (user+sys), median; ratio new/base (median, min)`);
for (const [k, v] of Object.entries(cpuMs))
  console.log(
    `${k.padEnd(20)} base ${med(v.base).toFixed(0).padStart(5)}  new ${med(v.next).toFixed(0).padStart(5)}  ${(med(v.next) / med(v.base)).toFixed(3)}  (min ${(Math.min(...v.next) / Math.min(...v.base)).toFixed(3)})`,
  );
