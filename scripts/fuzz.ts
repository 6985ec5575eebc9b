/**
 * `npm run fuzz [-- --cases N --seed S]`: the CLI fuzzer of test/fuzz/cliFuzz.ts at scale
 * (default 100,000 cases). Prints progress every 5,000 cases, the exit-code histogram, the
 * slowest case, and stops at the first case that breaks the contract (exit 1, with the case
 * as JSON so it can be replayed).
 */
import { parseArgs } from "node:util";
import fc from "fast-check";
import { type FuzzCase, fuzzCase, runFuzzCase } from "../test/fuzz/cliFuzz.js";

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

const codes = new Map<number, number>();
let done = 0;
let slowest = { ms: 0, case: null as FuzzCase | null };
const t0 = performance.now();
try {
  await fc.assert(
    fc.asyncProperty(fuzzCase, async (c) => {
      const r = await runFuzzCase(c);
      codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
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
const histogram = [...codes.entries()].sort((a, b) => a[0] - b[0]).map(([c, n]) => `exit ${c}: ${n}`);
console.log(`fuzz: ${done} cases passed (seed ${seed}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log(`  ${histogram.join(", ")}`);
console.log(`  slowest case ${slowest.ms.toFixed(0)} ms: ${JSON.stringify(slowest.case)}`);
