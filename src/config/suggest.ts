/**
 * "Did you mean …?" for misspelled config keys and enum values. Small and exact on purpose: the
 * candidate lists are a schema object's keys or an enum's values (a few dozen at most), so a
 * quadratic edit distance per candidate costs nothing.
 */

/**
 * Optimal-string-alignment distance (Damerau-Levenshtein restricted to adjacent transpositions
 * that are not edited again): insertions, deletions, substitutions and swaps each cost 1, so
 * `routr` → `router` and `plnaner` → `planner` are both one edit.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  // Three rolling rows suffice: a transposition looks two rows back.
  let before = new Array<number>(cols).fill(0);
  let previous = Array.from({ length: cols }, (_, j) => j);
  let current = new Array<number>(cols).fill(0);
  for (let i = 1; i < rows; i++) {
    current[0] = i;
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, before[j - 2] + 1);
      }
      current[j] = d;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[cols - 1];
}

/**
 * The candidate closest to `input`, or undefined when none is close enough to be a plausible
 * typo. Case and `-`/`_` are ignored first (`Block-Size` → `block_size` is always a match); then
 * up to one edit per three characters of the input (at least one) is allowed, and never as many
 * edits as the candidate has characters, so short inputs do not "match" unrelated short keys.
 * Ties go to the earlier candidate (schema declaration order), which keeps messages stable. When
 * no candidate is that close, a key written without its suffix is recognised too: `ttft` →
 * `ttft_ms`, `max_num_gpu` → … (the input, three characters at least, followed by `_` and more),
 * if exactly one candidate extends it so.
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  return closestByEdits(input, candidates) ?? uniqueExtension(input, candidates);
}

function uniqueExtension(input: string, candidates: readonly string[]): string | undefined {
  const normalized = normalize(input);
  if (normalized.length < 3) return undefined;
  const found = candidates.filter((c) => c !== input && normalize(c).startsWith(`${normalized}_`));
  return found.length === 1 ? found[0] : undefined;
}

function closestByEdits(input: string, candidates: readonly string[]): string | undefined {
  const normalized = normalize(input);
  const limit = Math.max(1, Math.floor(input.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === input) continue;
    const target = normalize(candidate);
    const distance = target === normalized ? 0 : editDistance(normalized, target);
    if (distance <= limit && distance < target.length && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function normalize(text: string): string {
  return text.toLowerCase().replaceAll("-", "_");
}

/** The hint text shown after an issue, e.g. `did you mean 'router'?`. */
export function didYouMean(suggestion: string): string {
  return `did you mean '${suggestion}'?`;
}
