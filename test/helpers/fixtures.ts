/**
 * Committed fixtures derived from the project data folder by scripts/derive-test-fixtures.ts, for
 * tests that must run in a clone with nothing beside it (`npm test`).
 */
import { join } from "node:path";

const FIXTURES = join(import.meta.dirname, "..", "fixtures");

/** The first 600 s of the FAST'25 conversation trace (Mooncake, trace block size 512), gzipped. */
export const CONVERSATION_600S = join(FIXTURES, "conversation_trace_600s.jsonl.gz");
/** Its rows: every request of the trace that arrives before 600 s. */
export const CONVERSATION_600S_ROWS = 1750;
