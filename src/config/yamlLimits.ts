/** Limits on YAML input (config files and `--set` values) that keep parsing bounded. */

/** Deepest nesting a config value may have (the deepest real config nests about 8 levels). */
export const MAX_VALUE_DEPTH = 64;

/**
 * An upper bound on the nesting of a YAML text, without parsing it: flow brackets and the
 * indentation steps of block lines both count, so a document that is too deep for the parser's
 * recursion is refused before it is parsed (a clear error instead of a stack overflow).
 */
export function nestingDepth(text: string): number {
  let flow = 0;
  let maxFlow = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"') i++;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "#") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "[" || c === "{") {
      flow++;
      if (flow > maxFlow) maxFlow = flow;
    } else if ((c === "]" || c === "}") && flow > 0) flow--;
    else if (c === "\n") quote = null;
  }
  // Block nesting: distinct indentation levels on the way down (each deeper line adds one).
  const indents: number[] = [];
  let maxBlock = 0;
  for (const line of text.split("\n")) {
    const body = line.trimStart();
    if (body === "" || body.startsWith("#")) continue;
    const indent = line.length - body.length;
    while (indents.length > 0 && indents[indents.length - 1] >= indent) indents.pop();
    indents.push(indent);
    // "- - - x" nests one level per dash.
    let dashes = 0;
    while (body.startsWith("- ", dashes * 2)) dashes++;
    if (indents.length + dashes > maxBlock) maxBlock = indents.length + dashes;
  }
  return maxFlow + maxBlock;
}
