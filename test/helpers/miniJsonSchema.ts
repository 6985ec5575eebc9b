/**
 * A small JSON Schema (draft 2020-12) validator for the keywords `fleetsim schema` emits, so the
 * tests can check configs against the generated schema without a validator dependency. A keyword
 * it does not know is an error, never silently ignored: if the generator starts emitting one, the
 * schema tests fail until this validator learns it.
 */

type Schema = boolean | { readonly [keyword: string]: unknown };

/** Keywords that only annotate (no effect on validity). */
const ANNOTATIONS = new Set(["$schema", "$id", "title", "description", "default", "examples"]);

const APPLICATORS = new Set([
  "type",
  "properties",
  "additionalProperties",
  "required",
  "enum",
  "const",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "items",
  "prefixItems",
  "propertyNames",
  "minItems",
  "maxItems",
]);

/** Every keyword of `schema` (recursively) is one this validator understands; returns the unknown ones. */
export function unknownKeywords(schema: Schema, at = "#"): string[] {
  if (typeof schema === "boolean") return [];
  const out: string[] = [];
  for (const [keyword, value] of Object.entries(schema)) {
    if (!ANNOTATIONS.has(keyword) && !APPLICATORS.has(keyword)) out.push(`${at}/${keyword}`);
    if (keyword === "properties") {
      for (const [name, sub] of Object.entries(value as Record<string, Schema>)) {
        out.push(...unknownKeywords(sub, `${at}/properties/${name}`));
      }
    } else if (keyword === "oneOf" || keyword === "anyOf" || keyword === "allOf") {
      (value as Schema[]).forEach((sub, i) => {
        out.push(...unknownKeywords(sub, `${at}/${keyword}/${i}`));
      });
    } else if (keyword === "prefixItems") {
      (value as Schema[]).forEach((sub, i) => {
        out.push(...unknownKeywords(sub, `${at}/prefixItems/${i}`));
      });
    } else if (
      keyword === "not" ||
      keyword === "items" ||
      keyword === "additionalProperties" ||
      keyword === "propertyNames"
    ) {
      out.push(...unknownKeywords(value as Schema, `${at}/${keyword}`));
    }
  }
  return out;
}

/** Validation errors of `value` against `schema` (empty = valid), as `path: reason` lines. */
export function validate(schema: Schema, value: unknown, path = "$"): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${path}: no value is allowed here`];
  const errors: string[] = [];
  const s = schema;
  if (s["type"] !== undefined && !hasType(value, s["type"] as string | string[])) {
    return [`${path}: expected ${JSON.stringify(s["type"])}, got ${JSON.stringify(value)}`];
  }
  if (s["const"] !== undefined && !deepEqual(value, s["const"])) {
    errors.push(`${path}: expected ${JSON.stringify(s["const"])}`);
  }
  if (Array.isArray(s["enum"]) && !s["enum"].some((v) => deepEqual(v, value))) {
    errors.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s["enum"])}`);
  }
  if (typeof value === "number") {
    if (typeof s["minimum"] === "number" && value < s["minimum"]) errors.push(`${path}: below minimum`);
    if (typeof s["maximum"] === "number" && value > s["maximum"]) errors.push(`${path}: above maximum`);
    if (typeof s["exclusiveMinimum"] === "number" && value <= s["exclusiveMinimum"]) {
      errors.push(`${path}: not above exclusiveMinimum`);
    }
    if (typeof s["exclusiveMaximum"] === "number" && value >= s["exclusiveMaximum"]) {
      errors.push(`${path}: not below exclusiveMaximum`);
    }
  }
  if (typeof value === "string") {
    const length = [...value].length;
    if (typeof s["minLength"] === "number" && length < s["minLength"]) errors.push(`${path}: too short`);
    if (typeof s["maxLength"] === "number" && length > s["maxLength"]) errors.push(`${path}: too long`);
  }
  if (Array.isArray(value)) {
    if (typeof s["minItems"] === "number" && value.length < s["minItems"])
      errors.push(`${path}: too few items`);
    if (typeof s["maxItems"] === "number" && value.length > s["maxItems"])
      errors.push(`${path}: too many items`);
    // A tuple: `prefixItems` for the leading positions, `items` (when given) for the rest.
    const prefix = Array.isArray(s["prefixItems"]) ? (s["prefixItems"] as Schema[]) : [];
    value.forEach((item, i) => {
      if (i < prefix.length) errors.push(...validate(prefix[i], item, `${path}[${i}]`));
      else if (s["items"] !== undefined)
        errors.push(...validate(s["items"] as Schema, item, `${path}[${i}]`));
    });
  }
  if (isObject(value)) {
    const properties = (s["properties"] ?? {}) as Record<string, Schema>;
    for (const key of (s["required"] ?? []) as string[]) {
      if (!Object.hasOwn(value, key)) errors.push(`${path}: missing required '${key}'`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (s["propertyNames"] !== undefined) {
        errors.push(...validate(s["propertyNames"] as Schema, key, `${path}.${key} (name)`));
      }
      if (Object.hasOwn(properties, key)) {
        errors.push(...validate(properties[key], item, `${path}.${key}`));
      } else if (s["additionalProperties"] !== undefined) {
        errors.push(...validate(s["additionalProperties"] as Schema, item, `${path}.${key}`));
      }
    }
  }
  if (Array.isArray(s["allOf"])) {
    for (const sub of s["allOf"] as Schema[]) errors.push(...validate(sub, value, path));
  }
  if (Array.isArray(s["anyOf"])) {
    const branches = s["anyOf"] as Schema[];
    if (!branches.some((sub) => validate(sub, value, path).length === 0)) {
      errors.push(`${path}: matches no anyOf branch`);
    }
  }
  if (Array.isArray(s["oneOf"])) {
    const matching = (s["oneOf"] as Schema[]).filter((sub) => validate(sub, value, path).length === 0);
    if (matching.length !== 1) errors.push(`${path}: matches ${matching.length} oneOf branches, not 1`);
  }
  if (s["not"] !== undefined && validate(s["not"] as Schema, value, path).length === 0) {
    errors.push(`${path}: matches a 'not' schema${s["description"] ? ` (${String(s["description"])})` : ""}`);
  }
  return errors;
}

function hasType(value: unknown, type: string | string[]): boolean {
  const types = Array.isArray(type) ? type : [type];
  return types.some((t) => {
    switch (t) {
      case "object":
        return isObject(value);
      case "array":
        return Array.isArray(value);
      case "string":
        return typeof value === "string";
      case "number":
        return typeof value === "number" && Number.isFinite(value);
      case "integer":
        return Number.isInteger(value);
      case "boolean":
        return typeof value === "boolean";
      case "null":
        return value === null;
      default:
        throw new Error(`miniJsonSchema: unknown type '${t}'`);
    }
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
