/**
 * The work of one forward pass as a timing model prices it (`TimingModel.passMs`): a prefill
 * half, a decode half and the draft tokens the decoding sequences verify. A caller keeps one and
 * refills it for every pass, so pricing allocates nothing; a count of 0 means that half is empty.
 */
export class PassShape {
  /** Requests that schedule prompt tokens in this pass. */
  prefillCount = 0;
  /** Mean over those requests of (tokens before this chunk + chunk), integer division. */
  meanIsl = 0;
  /** Mean over those requests of tokens before this chunk (cached prefix + earlier chunks). */
  meanPrefix = 0;
  /** Requests that emit a token at the end of this pass. */
  decodeBatch = 0;
  /** Σ sequence length over those requests. */
  activeKvTokens = 0;
  /** activeKvTokens / decodeBatch (the scheduler core's own rounding). */
  meanContext = 0;
  /** num_gpu_blocks × block_size of the worker. */
  totalKvTokens = 0;
  /** Decoding sequences that verify drafts (docs/speculation.md); 0 without speculation. */
  draftSequences = 0;
  /** Draft tokens they verify, besides their one real token each. */
  draftTokens = 0;

  /** Sets the prefill half from the batch's sums; the means are integer divisions, as both scheduler cores take them. */
  setPrefillSums(count: number, islSum: number, prefixSum: number): this {
    return count > 0
      ? this.setPrefill(count, Math.floor(islSum / count), Math.floor(prefixSum / count))
      : this.setPrefill(0, 0, 0);
  }

  setPrefill(count: number, meanIsl: number, meanPrefix: number): this {
    this.prefillCount = count;
    this.meanIsl = meanIsl;
    this.meanPrefix = meanPrefix;
    return this;
  }

  setDecode(batch: number, activeKvTokens: number, meanContext: number, totalKvTokens: number): this {
    this.decodeBatch = batch;
    this.activeKvTokens = activeKvTokens;
    this.meanContext = meanContext;
    this.totalKvTokens = totalKvTokens;
    return this;
  }

  setDrafts(sequences: number, tokens: number): this {
    this.draftSequences = sequences;
    this.draftTokens = tokens;
    return this;
  }
}
