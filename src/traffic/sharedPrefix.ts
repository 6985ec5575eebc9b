/**
 * Shared-prefix synthetic traffic (`traffic.source.type: synthetic-shared-prefix`, docs/traffic.md
 * §Shared-prefix groups): `groups × prompts_per_group` distinct prompts, each a group's system
 * prompt followed by a question of its own — the shape of vLLM's `prefix_repetition` dataset and
 * inference-perf's `shared_prefix` data. A fleetsim extension.
 *
 * - Prompt `p` belongs to group `⌊p / prompts_per_group⌋`; its first `⌊system_prompt_tokens / E⌋`
 *   engine blocks are the group's (identical block hashes within the group, so prefix caching and
 *   the KV router see the sharing), every later full block is the prompt's own. The block that
 *   straddles the end of the system prompt holds question tokens too, so it is not shared.
 * - Requests take the prompts in one seeded random order (a permutation of all prompts), cycling
 *   when there are more requests than prompts; a repeated prompt repeats its blocks exactly.
 * - Draws from `Prng(seed)`, in order: the permutation, one question length per prompt, one output
 *   length per request.
 */
import { Prng } from "../util/prng.js";
import { checkLengthSpec, LengthSampler, type LengthSpec, MAX_LENGTH } from "./lengthDistribution.js";
import type { RequestTable } from "./requests.js";
import { GROUP_VALUE_BASE, SEQUENCE_HASH_SEED, UniqueIds, writeChain } from "./synthetic/hashes.js";
import { singleTurnTable } from "./synthetic/index.js";

export interface SharedPrefixOptions {
  readonly groups: number;
  readonly promptsPerGroup: number;
  readonly systemPromptTokens: number;
  readonly question: LengthSpec;
  readonly output: LengthSpec;
  readonly requests: number;
  readonly engineBlockSize: number;
  readonly seed: number;
  /** Arrival time of each request (NaN under closed loop); length `requests`. */
  readonly timestampMs: Float64Array;
}

export function makeSharedPrefixTable(opts: SharedPrefixOptions): RequestTable {
  const { groups: G, promptsPerGroup: P, systemPromptTokens: S, requests: count, engineBlockSize: E } = opts;
  const N = G * P;
  if (!(Number.isInteger(G) && G >= 1 && Number.isInteger(P) && P >= 1 && N <= 0x7fffffff)) {
    throw new RangeError(`groups and prompts per group must be positive integers, got ${G} × ${P}`);
  }
  if (!(Number.isInteger(S) && S >= 1 && S <= MAX_LENGTH)) {
    throw new RangeError(`systemPromptTokens must be a positive integer, got ${S}`);
  }
  if (!(Number.isInteger(count) && count >= 0)) throw new RangeError(`bad request count ${count}`);
  if (!(Number.isInteger(E) && E > 0)) throw new RangeError(`bad engine block size ${E}`);
  if (opts.timestampMs.length !== count) throw new RangeError("timestampMs must have one entry per request");
  checkLengthSpec(opts.question, 0, "question");
  checkLengthSpec(opts.output, 1, "output");

  const rng = new Prng(opts.seed);
  const perm = shuffledPrompts(N, rng);
  const question = new LengthSampler(opts.question, rng).fill(new Int32Array(N));
  const outputLength = new LengthSampler(opts.output, rng).fill(new Int32Array(count));

  const systemBlocks = Math.floor(S / E);
  const inputLength = new Int32Array(count);
  const blockOffsets = new Int32Array(count + 1);
  let total = 0;
  for (let i = 0; i < count; i++) {
    const len = S + question[perm[i % N]];
    if (len > MAX_LENGTH) throw new RangeError(`prompt of ${len} tokens is too long`);
    inputLength[i] = len;
    blockOffsets[i] = total;
    total += Math.floor(len / E);
    if (total > 0x7fffffff) throw new RangeError(`too many engine blocks (${total})`);
  }
  blockOffsets[count] = total;

  // Each group's system-prompt blocks, chained once.
  const groupHashes = new Float64Array(G * systemBlocks);
  for (let g = 0; g < G; g++) {
    writeChain(groupHashes, g * systemBlocks, systemBlocks, SEQUENCE_HASH_SEED, GROUP_VALUE_BASE + g, 0, E);
  }
  const blockHashes = new Float64Array(total);
  const ids = new UniqueIds();
  // First unique block value of each prompt, handed out on first use (0 = not yet).
  const firstId = new Float64Array(N);
  for (let i = 0; i < count; i++) {
    const p = perm[i % N];
    const g = Math.floor(p / P);
    const at = blockOffsets[i];
    const blocks = blockOffsets[i + 1] - at;
    const shared = Math.min(systemBlocks, blocks);
    blockHashes.set(groupHashes.subarray(g * systemBlocks, g * systemBlocks + shared), at);
    const own = blocks - shared;
    if (own === 0) continue;
    if (firstId[p] === 0) firstId[p] = ids.take(own);
    const parent = shared === 0 ? SEQUENCE_HASH_SEED : blockHashes[at + shared - 1];
    writeChain(blockHashes, at + shared, own, parent, firstId[p], 1, E);
  }

  return singleTurnTable(count, opts.timestampMs, inputLength, outputLength, blockOffsets, blockHashes, E);
}

/** Group of request `row` in a table built with these options (tests, diagnostics). */
export function sharedPrefixGroupOf(
  opts: Pick<SharedPrefixOptions, "groups" | "promptsPerGroup" | "seed">,
  rows: number,
): Int32Array {
  const perm = shuffledPrompts(opts.groups * opts.promptsPerGroup, new Prng(opts.seed));
  const out = new Int32Array(rows);
  for (let i = 0; i < rows; i++) out[i] = Math.floor(perm[i % perm.length] / opts.promptsPerGroup);
  return out;
}

/** A Fisher–Yates permutation of `0 .. n-1`: the order in which requests take the prompts. */
function shuffledPrompts(n: number, rng: Prng): Int32Array {
  const perm = new Int32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = rng.nextIntInclusive(0, i);
    const t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  return perm;
}
