/**
 * The project data folder beside the repository (`../shared`): the FAST'25 traces, the
 * silicon-measured perf-data tables and the reference model configs. Only `npm run test:shared`
 * (vitest.shared.config.ts) runs the tests that read it; its globalSetup fails the run when the
 * folder is missing (requireSharedData.setup.ts), it never skips.
 */
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..", "..");
export const SHARED = resolve(ROOT, "..", "shared");
/** The FAST'25 conversation trace (Mooncake, 12,031 rows over one hour), as the seeds replay it. */
export const CONVERSATION = join(SHARED, "traces", "mooncake-fast25", "conversation_trace.jsonl");
/** AIConfigurator-format perf-data tree: `<gpu>/<backend>/<version>/*.parquet` and `system.yaml`. */
export const PERF_DATA = join(SHARED, "perf-data");
/** The reference Hugging Face `config.json` files that scripts/derive-model-catalog.ts reads. */
export const MODEL_CONFIGS = join(SHARED, "model-configs");

/** Everything the shared-data tests read. */
export const REQUIRED = [CONVERSATION, PERF_DATA, MODEL_CONFIGS] as const;
