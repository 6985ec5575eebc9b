/**
 * The run pipeline (spec → workload → timing → policy → replay → prediction document), as the
 * CLI, the library API, the sweep workers, the tests and the benchmarks use it.
 */
export { type RunHooks, type RunOutcome, runPrediction } from "./run.js";
export { type SimulateOptions, type Simulation, simulate } from "./simulate.js";
export { createRoleTimings } from "./timings.js";
export { loadRetuneWorkload, loadWorkload } from "./workload.js";
