/**
 * Built-in `max_position_embeddings` of popular models, the last resort for
 * `context_length: max` when neither a local model directory nor the Hugging Face cache has the
 * model's config.json (fleetsim never downloads). Values are the models' published HF configs.
 * Keys are lower-cased HF ids.
 */

const LLAMA_3_1 = 131072;
const QWEN3 = 40960;

const TABLE: ReadonlyArray<readonly [string, number]> = [
  ["meta-llama/Llama-3.1-8B", LLAMA_3_1],
  ["meta-llama/Llama-3.1-8B-Instruct", LLAMA_3_1],
  ["meta-llama/Llama-3.1-70B", LLAMA_3_1],
  ["meta-llama/Llama-3.1-70B-Instruct", LLAMA_3_1],
  ["meta-llama/Llama-3.1-405B", LLAMA_3_1],
  ["meta-llama/Llama-3.1-405B-Instruct", LLAMA_3_1],
  ["meta-llama/Meta-Llama-3.1-8B-Instruct", LLAMA_3_1],
  ["meta-llama/Meta-Llama-3.1-70B-Instruct", LLAMA_3_1],
  ["meta-llama/Llama-3.3-70B-Instruct", LLAMA_3_1],
  ["nvidia/Llama-3.1-8B-Instruct-FP8", LLAMA_3_1],
  ["nvidia/Llama-3.1-70B-Instruct-FP8", LLAMA_3_1],
  ["nvidia/Llama-3.1-405B-Instruct-FP8", LLAMA_3_1],
  ["nvidia/Llama-3.3-70B-Instruct-FP8", LLAMA_3_1],
  ["Qwen/Qwen3-8B", QWEN3],
  ["Qwen/Qwen3-8B-FP8", QWEN3],
  ["Qwen/Qwen3-32B", QWEN3],
  ["Qwen/Qwen3-32B-FP8", QWEN3],
  ["Qwen/Qwen3-30B-A3B", QWEN3],
  ["Qwen/Qwen3-30B-A3B-FP8", QWEN3],
  ["Qwen/Qwen3-235B-A22B", QWEN3],
  ["Qwen/Qwen3-235B-A22B-FP8", QWEN3],
  ["mistralai/Mixtral-8x22B-v0.1", 65536],
  ["mistralai/Mixtral-8x22B-Instruct-v0.1", 65536],
];

const BY_ID: ReadonlyMap<string, number> = new Map(TABLE.map(([id, len]) => [id.toLowerCase(), len]));

/** Built-in max context length of an HF model id (case-insensitive, as the Hub is), if known. */
export function knownContextLength(model: string): number | undefined {
  return BY_ID.get(model.toLowerCase());
}
