/**
 * 32-bit mix of a non-negative 53-bit block hash (its low and high words, through murmur3's fmix32),
 * for the open-addressing tables of the router. Callers mask it to their table size.
 */
export function mixBlockHash(key: number): number {
  let h = (key >>> 0) ^ Math.imul((key / 4294967296) >>> 0, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
