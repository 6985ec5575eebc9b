/**
 * The sections `predict --detail` names (docs/output.md "Details"), in the reference's order
 * (aisimulate 0.13.0 `--detail summary,memory,time,energy,source`, or `all`). A module of its own,
 * without zod, so that the CLI parses the option before loading anything else.
 */
export const DETAIL_SECTIONS = ["summary", "memory", "time", "energy", "source"] as const;
export type DetailSection = (typeof DETAIL_SECTIONS)[number];

/** The sections a `--detail` value names (`all`: every one), or the first unknown name in it. */
export function parseDetailSections(value: string): DetailSection[] | { readonly unknown: string } {
  const out = new Set<DetailSection>();
  for (const raw of value.split(",")) {
    const name = raw.trim();
    if (name === "all") for (const s of DETAIL_SECTIONS) out.add(s);
    else if ((DETAIL_SECTIONS as readonly string[]).includes(name)) out.add(name as DetailSection);
    else return { unknown: name };
  }
  return DETAIL_SECTIONS.filter((s) => out.has(s));
}
