/**
 * Key paths of the prediction.json contract, for test/output/*.test.ts: every path the strict
 * schema allows (from its JSON Schema), and every path a document uses, read through that schema
 * (so a record's keys — a map keyed by data, e.g. live parameter names — count as one path, `*`).
 * Paths are dotted; `[]` is "every element of an array", `[0]` a tuple position.
 */
type Node = { [key: string]: unknown };

const isObj = (v: unknown): v is Node => v !== null && typeof v === "object" && !Array.isArray(v);

/** The branches of a JSON Schema node (`anyOf` and `oneOf`, a discriminated union, expanded). */
function branches(s: Node): Node[] {
  for (const key of ["anyOf", "oneOf"])
    if (Array.isArray(s[key])) return (s[key] as Node[]).flatMap(branches);
  return [s];
}

const join = (path: string, key: string): string => (path === "" ? key : `${path}.${key}`);

/** Every key path the schema allows. */
export function schemaPaths(schema: Node, path = "", out = new Set<string>()): Set<string> {
  for (const b of branches(schema)) {
    if (isObj(b["properties"])) {
      for (const [k, sub] of Object.entries(b["properties"] as Node)) {
        out.add(join(path, k));
        schemaPaths(sub as Node, join(path, k), out);
      }
    }
    if (isObj(b["additionalProperties"])) {
      out.add(join(path, "*"));
      schemaPaths(b["additionalProperties"] as Node, join(path, "*"), out);
    }
    if (Array.isArray(b["prefixItems"])) {
      (b["prefixItems"] as Node[]).forEach((sub, i) => {
        schemaPaths(sub, `${path}[${i}]`, out);
      });
    } else if (isObj(b["items"])) schemaPaths(b["items"] as Node, `${path}[]`, out);
  }
  return out;
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return "number";
  return typeof v;
}

function accepts(s: Node, v: unknown): boolean {
  const t = s["type"];
  const types = Array.isArray(t) ? t : t === undefined ? [] : [t];
  return types.includes(kindOf(v)) || (kindOf(v) === "number" && types.includes("integer"));
}

/** Every key path `doc` uses, named as the schema names it; a key the schema lacks is named as it is. */
export function documentPaths(schema: Node, doc: unknown, path = "", out = new Set<string>()): Set<string> {
  const b = branches(schema).find((x) => accepts(x, doc)) ?? {};
  if (isObj(doc)) {
    const props = isObj(b["properties"]) ? (b["properties"] as Node) : {};
    const rest = isObj(b["additionalProperties"]) ? (b["additionalProperties"] as Node) : null;
    for (const [k, v] of Object.entries(doc)) {
      const known = Object.hasOwn(props, k);
      const name = known || rest === null ? k : "*";
      out.add(join(path, name));
      documentPaths(known ? (props[k] as Node) : (rest ?? {}), v, join(path, name), out);
    }
  } else if (Array.isArray(doc)) {
    const tuple = Array.isArray(b["prefixItems"]) ? (b["prefixItems"] as Node[]) : null;
    doc.forEach((v, i) => {
      if (tuple !== null) documentPaths(tuple[i] ?? {}, v, `${path}[${i}]`, out);
      else documentPaths(isObj(b["items"]) ? (b["items"] as Node) : {}, v, `${path}[]`, out);
    });
  }
  return out;
}
