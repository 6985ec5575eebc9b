/**
 * `npm run fuzz [-- --cases N --seed S]`: the CLI fuzzers at scale (default 100,000 cases): three
 * in four are test/fuzz/cliFuzz.ts's mutated configs, `--set` values and trace lines, one in four
 * test/fuzz/edgeFuzz.ts's input at the edges (binary and endless traces, cut gzip, broken
 * prediction.json files, damaged sweep directories). Prints progress every 5,000 cases, the
 * exit-code histogram per family, the slowest case, and stops at the first case that breaks the
 * contract (exit 1, with the case as JSON so it can be replayed).
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { type FuzzCase, type FuzzOutcome, fuzzCase, runFuzzCase } from "../test/fuzz/cliFuzz.js";
import { type EdgeCase, edgeCase, runEdgeCase } from "../test/fuzz/edgeFuzz.js";

type AnyCase =
  | { readonly family: "config"; readonly c: FuzzCase }
  | { readonly family: "edge"; readonly c: EdgeCase };

const anyCase: fc.Arbitrary<AnyCase> = fc.oneof(
  { weight: 3, arbitrary: fuzzCase.map((c) => ({ family: "config" as const, c })) },
  { weight: 1, arbitrary: edgeCase.map((c) => ({ family: "edge" as const, c })) },
);

function runAnyCase(a: AnyCase): Promise<FuzzOutcome> {
  return a.family === "config" ? runFuzzCase(a.c) : runEdgeCase(a.c);
}

const { values } = parseArgs({
  options: {
    cases: { type: "string", default: "100000" },
    seed: { type: "string", default: String(Date.now() % 2 ** 31) },
  },
});
// Every replay of the fuzzer checks its bookkeeping invariants, as in the test suite.
process.env.FLEETSIM_CHECK_INVARIANTS ??= "1";
const cases = Number(values.cases);
const seed = Number(values.seed);
if (!Number.isSafeInteger(cases) || cases <= 0 || !Number.isSafeInteger(seed)) {
  console.error("fuzz: --cases and --seed must be integers");
  process.exit(2);
}

const codes = new Map<string, number>();
let done = 0;
let slowest = { ms: 0, case: null as AnyCase | null };
const t0 = performance.now();
try {
  await fc.assert(
    fc.asyncProperty(anyCase, async (c) => {
      const r = await runAnyCase(c);
      const key = `${c.family === "config" ? "config" : c.c.kind} exit ${r.code}`;
      codes.set(key, (codes.get(key) ?? 0) + 1);
      if (r.ms > slowest.ms) slowest = { ms: r.ms, case: c };
      if (++done % 5000 === 0) {
        console.log(`${done} cases, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
      }
      if (r.problem !== null) throw new Error(`${r.problem}\ncase: ${JSON.stringify(c)}`);
    }),
    { seed, numRuns: cases, endOnFailure: true },
  );
} catch (err) {
  console.error(`fuzz: FAILED (seed ${seed}) after ${done} cases\n${(err as Error).message}`);
  process.exit(1);
}
const histogram = [...codes.entries()].sort((a, b) => a[0].localeCompare(b[0])).map(([c, n]) => `${c}: ${n}`);
console.log(`fuzz: ${done} cases passed (seed ${seed}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log(`  ${histogram.join(", ")}`);
console.log(`  slowest case ${slowest.ms.toFixed(0)} ms: ${JSON.stringify(slowest.case)}`);
