/**
 * Every key path a zod schema accepts (`engine.workers.prefill.kv_cache.block_size`), read from
 * the schema objects themselves, so a key added to the schema shows up here without anyone
 * listing it. Array elements add `[]`, record values `*`; wrappers (optional, default, prefault,
 * nullable), pipes (transform, preprocess) and unions are looked through.
 */
import type * as z from "zod";
import { REFUSED_KEYS } from "../../src/config/schema/primitives.js";

interface Def {
  readonly type: string;
  readonly shape?: Record<string, z.ZodType>;
  readonly innerType?: z.ZodType;
  readonly in?: z.ZodType;
  readonly out?: z.ZodType;
  readonly options?: readonly z.ZodType[];
  readonly left?: z.ZodType;
  readonly right?: z.ZodType;
  readonly valueType?: z.ZodType;
  readonly element?: z.ZodType;
  readonly items?: readonly z.ZodType[];
  readonly getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schemas inside one node, each with the path it describes. */
function children(def: Def, path: string): [z.ZodType | undefined, string][] {
  switch (def.type) {
    case "object":
      return Object.entries(def.shape ?? {}).map(([key, child]) => [
        child,
        path === "" ? key : `${path}.${key}`,
      ]);
    case "pipe":
      return [def.in, def.out].map((child) => [child, path]);
    case "union":
      return (def.options ?? []).map((child) => [child, path]);
    case "intersection":
      return [def.left, def.right].map((child) => [child, path]);
    case "record":
      return [[def.valueType, `${path}.*`]];
    case "array":
      return [[def.element, `${path}[]`]];
    case "tuple":
      return (def.items ?? []).map((child) => [child, `${path}[]`]);
    case "lazy":
      return [[def.getter?.(), path]];
    default:
      // optional, nullable, default, prefault, readonly, catch, nonoptional wrap innerType.
      return [[def.innerType, path]];
  }
}

export function schemaKeyPaths(schema: z.ZodType): string[] {
  return [...walk(schema).keys()];
}

/**
 * Each key path with whether the schema refuses the key wherever it occurs (`rejectKey`,
 * `unsupportedKey`: REFUSED_KEYS). A key refused in one union branch and accepted in another
 * (`engine.kv_transfer`) is accepted.
 */
function walk(schema: z.ZodType): Map<string, boolean> {
  const refused = new Map<string, boolean>();
  const visit = (node: z.ZodType, path: string, open: ReadonlySet<z.ZodType>): void => {
    // A schema inside itself (z.lazy) is walked once per path.
    if (open.has(node)) return;
    const inside = new Set(open).add(node);
    const def = defOf(node);
    for (const [child, at] of children(def, path)) {
      if (def.type === "object" && child !== undefined) {
        refused.set(at, (refused.get(at) ?? true) && REFUSED_KEYS.has(child));
      }
      if (child !== undefined) visit(child, at, inside);
    }
  };
  visit(schema, "", new Set());
  return refused;
}

/** The three worker roles' keys are the same: one name for them, `engine.workers.<role>`. */
export const ROLE = "engine.workers.<role>";

export const byRole = (path: string): string =>
  path.replace(/^engine\.workers\.(aggregated|prefill|decode)(?=\.|$)/, ROLE);

/** The schema's key paths with the roles made one. */
export function schemaKeyPathsByRole(schema: z.ZodType): string[] {
  return [...new Set(schemaKeyPaths(schema).map(byRole))];
}

/** The keys (roles made one) the schema refuses wherever they occur: nothing resolves or sets them. */
export function refusedKeyPathsByRole(schema: z.ZodType): string[] {
  const byPath = new Map<string, boolean>();
  for (const [path, refused] of walk(schema)) {
    const at = byRole(path);
    byPath.set(at, (byPath.get(at) ?? true) && refused);
  }
  return [...byPath].filter(([, refused]) => refused).map(([path]) => path);
}

/** `path` is `prefix` or a key (or array element) below it. */
export function under(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}
