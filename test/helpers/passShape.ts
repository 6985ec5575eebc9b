import { PassShape } from "../../src/timing/passShape.js";

/**
 * A `PassShape` from positional values, in the order of its fields: prefill count, mean ISL,
 * mean prefix, decode batch, active KV tokens, mean context, total KV tokens, draft sequences,
 * draft tokens (omitted: 0). Compact for tables of passes in tests.
 */
export function passOf(...values: number[]): PassShape {
  const [prefillCount = 0, meanIsl = 0, meanPrefix = 0, decodeBatch = 0, activeKv = 0, meanContext = 0] =
    values;
  const [totalKv = 0, draftSequences = 0, draftTokens = 0] = values.slice(6);
  const pass = new PassShape();
  pass.prefillCount = prefillCount;
  pass.meanIsl = meanIsl;
  pass.meanPrefix = meanPrefix;
  return pass.setDecode(decodeBatch, activeKv, meanContext, totalKv).setDrafts(draftSequences, draftTokens);
}
