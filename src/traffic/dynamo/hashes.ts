/**
 * Dynamo `input_sequence_hashes` → compact replay ids.
 *
 * Dynamo records u64 xxh3 sequence hashes (`Vec<u64>` in the reference loader). Each identifies a
 * whole prefix of trace blocks, so only equality matters: the loader maps every distinct hash to
 * a small integer in order of first appearance (`ai-dynamo/dynamo@dc6d631:lib/mocker/src/loadgen/trace.rs`, "compact replay ids"), and those
 * ids play the part of Mooncake `hash_ids` in the block-hash expansion.
 *
 * Exactness: `JSON.parse` rounds integers above 2^53 to the nearest double, which could merge two
 * distinct u64 hashes (a 2^-53 chance per pair, but silent). So when a row holds such a value the
 * raw digits are read back from the line text and used as the key instead; values up to 2^53 are
 * keyed by the number itself. Either way one value has exactly one key.
 */

/** The largest u64, as text (20 digits). */
const U64_MAX_TEXT = "18446744073709551615";
const MAX_COMPACT_ID = 0xffffffff;

/** Assigns dense ids (0, 1, 2, …) to hash keys in order of first appearance. */
export class CompactIds {
  private readonly ids = new Map<number | string, number>();

  /** Number of distinct hashes seen. */
  get size(): number {
    return this.ids.size;
  }

  /** The id of `key`, assigning the next one on first sight. */
  idOf(key: number | string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      if (id > MAX_COMPACT_ID) throw new RangeError("more than 2^32 distinct sequence hashes");
      this.ids.set(key, id);
    }
    return id;
  }
}

/**
 * The key of one parsed hash element, or a message saying why it is not a u64.
 * `raw` is the element's exact source text when known (only needed above 2^53).
 */
export function hashKey(value: unknown, raw: string | undefined): number | string | { error: string } {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    return { error: "expected a non-negative integer" };
  }
  if (Number.isSafeInteger(value)) return value;
  const digits = raw ?? BigInt(value).toString();
  if (!/^[0-9]+$/.test(digits)) return { error: `expected an integer, got ${digits}` };
  if (
    digits.length > U64_MAX_TEXT.length ||
    (digits.length === U64_MAX_TEXT.length && digits > U64_MAX_TEXT)
  ) {
    return { error: `value ${digits} does not fit a u64` };
  }
  return digits;
}

/**
 * The source text of the elements of the `input_sequence_hashes` array in a JSON line, or
 * undefined when it cannot be located unambiguously. Only called for rows holding values above
 * 2^53. Each candidate array (the key may appear more than once, e.g. in a wrapped record) is
 * accepted only if its elements parse to exactly the `parsed` doubles, so a wrong match is
 * impossible; the last such array wins, as `JSON.parse` keeps the last duplicate key.
 */
export function rawHashTokens(line: string, parsed: readonly unknown[]): string[] | undefined {
  const KEY = "input_sequence_hashes";
  let found: string[] | undefined;
  let i = 0;
  const n = line.length;
  while (i < n) {
    if (line.charCodeAt(i) !== 34 /* " */) {
      i++;
      continue;
    }
    const start = ++i;
    while (i < n) {
      const c = line.charCodeAt(i);
      if (c === 92 /* \ */) i += 2;
      else if (c === 34) break;
      else i++;
    }
    const end = i++;
    if (end - start !== KEY.length || !line.startsWith(KEY, start)) continue;
    let j = skipSpace(line, i);
    if (line[j] !== ":") continue;
    j = skipSpace(line, j + 1);
    if (line[j] !== "[") continue;
    const tokens = readNumberArray(line, j + 1);
    if (tokens === undefined) continue;
    i = tokens.next;
    if (sameValues(tokens.items, parsed)) found = tokens.items;
  }
  return found;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
    i++;
  }
  return i;
}

/** Number tokens of an array starting after its `[`; undefined if an element is not a number. */
function readNumberArray(text: string, i: number): { items: string[]; next: number } | undefined {
  const items: string[] = [];
  i = skipSpace(text, i);
  if (text[i] === "]") return { items, next: i + 1 };
  for (;;) {
    const start = i;
    while (i < text.length && /[-+0-9.eE]/.test(text[i])) i++;
    if (i === start) return undefined;
    items.push(text.slice(start, i));
    i = skipSpace(text, i);
    if (text[i] === "]") return { items, next: i + 1 };
    if (text[i] !== ",") return undefined;
    i = skipSpace(text, i + 1);
  }
}

function sameValues(tokens: readonly string[], parsed: readonly unknown[]): boolean {
  if (tokens.length !== parsed.length) return false;
  for (let k = 0; k < tokens.length; k++) {
    if (Number(tokens[k]) !== parsed[k]) return false;
  }
  return true;
}
