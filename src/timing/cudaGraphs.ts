/**
 * vLLM's CUDA-graph batch padding (docs/timing.md "CUDA-graph padding"). vLLM V1 captures its
 * forward pass as CUDA graphs for a fixed list of token counts and runs a pass of up to the
 * largest of them as the graph of the next captured size, the padding rows computed like real ones
 * (`vllm-project/vllm@000fc94b:vllm/config/vllm.py`, `_set_cudagraph_sizes`: 1, 2, 4, then
 * multiples of 8 below 256, then multiples of 16 up to `min(2 × max_num_seqs, 512)`, capped by
 * `max_num_batched_tokens`, which is itself captured when it is below that cap). Attention runs on
 * the real requests; the GEMMs, norms, activations, MoE and all-reduces see the padded count.
 */

/** The padded token count of each count up to the largest captured size (index = tokens). */
export class CudaGraphPadding {
  private readonly padded: Int32Array;

  private constructor(padded: Int32Array) {
    this.padded = padded;
  }

  /** vLLM's default capture sizes for a role with these scheduler limits; null when none is captured. */
  static vllmDefault(maxSequences: number, maxBatchedTokens: number): CudaGraphPadding | null {
    const cap = Math.min(2 * maxSequences, 512, maxBatchedTokens);
    if (!(cap >= 1)) return null;
    return CudaGraphPadding.of(vllmCaptureSizes(cap, maxBatchedTokens));
  }

  /** Padding to the given ascending capture sizes. */
  static of(sizes: readonly number[]): CudaGraphPadding {
    const largest = sizes[sizes.length - 1] ?? 0;
    const padded = new Int32Array(largest + 1);
    let k = 0;
    for (let t = 1; t <= largest; t++) {
      while (sizes[k] < t) k++;
      padded[t] = sizes[k];
    }
    return new CudaGraphPadding(padded);
  }

  /** The largest captured size: a pass of more tokens runs without a graph, unpadded. */
  get largest(): number {
    return this.padded.length - 1;
  }

  /** The token count a pass of `tokens` (a count, or a mean-based estimate of one) runs as. */
  tokens(tokens: number): number {
    if (!(tokens > 0)) return tokens;
    const whole = Math.ceil(tokens);
    return whole < this.padded.length ? this.padded[whole] : tokens;
  }
}

/** `_set_cudagraph_sizes`'s default list for a capture cap (ascending, without repeats). */
export function vllmCaptureSizes(cap: number, maxBatchedTokens: number): number[] {
  const sizes = [1, 2, 4].filter((s) => s <= cap);
  for (let s = 8; s < Math.min(cap + 1, 256); s += 8) sizes.push(s);
  if (cap >= 256) for (let s = 256; s <= cap; s += 16) sizes.push(s);
  if (maxBatchedTokens <= cap && !sizes.includes(maxBatchedTokens)) sizes.push(maxBatchedTokens);
  return [...new Set(sizes)].sort((a, b) => a - b);
}
