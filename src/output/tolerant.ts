/**
 * A tolerant reading schema derived from a strict one, for documents fleetsim did not write or
 * wrote in an older version (no `timeseries`, no `run`; aisimulate's own prediction.json): every
 * object field becomes optional and a field of the wrong type is dropped (read as absent) instead
 * of failing the document; unknown keys are dropped; an array of objects keeps the elements that
 * read. Arrays of numbers (time series) stay whole: one bad element drops the series, as a chart
 * drawn from a shifted series would be wrong.
 */
import * as z from "zod";

/** What `tolerant(schema)` reads: `T` with every object field optional, all the way down. */
export type Tolerant<T> = T extends readonly (infer E)[]
  ? E extends object
    ? Tolerant<E>[]
    : T
  : T extends object
    ? { [K in keyof T]?: Tolerant<T[K]> }
    : T;

function isObjectLike(s: z.ZodType): boolean {
  if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodReadonly) {
    return isObjectLike(s.unwrap() as z.ZodType);
  }
  return s instanceof z.ZodObject || s instanceof z.ZodRecord;
}

/** The shape of a tolerant object: each field optional, a field that does not read is absent. */
export function tolerantShape(shape: Readonly<Record<string, z.ZodType>>): Record<string, z.ZodType> {
  const out: Record<string, z.ZodType> = {};
  for (const [k, field] of Object.entries(shape)) out[k] = tolerantSchema(field).optional().catch(undefined);
  return out;
}

function tolerantSchema(s: z.ZodType): z.ZodType {
  if (s instanceof z.ZodOptional) return tolerantSchema(s.unwrap() as z.ZodType).optional();
  if (s instanceof z.ZodNullable) return tolerantSchema(s.unwrap() as z.ZodType).nullable();
  if (s instanceof z.ZodReadonly) return tolerantSchema(s.unwrap() as z.ZodType);
  if (s instanceof z.ZodObject) return z.object(tolerantShape(s.shape as Record<string, z.ZodType>));
  if (s instanceof z.ZodRecord) {
    const value = tolerantSchema(s.valueType as z.ZodType);
    return z.record(z.string(), z.unknown()).transform((r) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(r)) {
        const read = value.safeParse(v);
        if (read.success) out[k] = read.data;
      }
      return out;
    });
  }
  if (s instanceof z.ZodArray && isObjectLike(s.element as z.ZodType)) {
    const element = tolerantSchema(s.element as z.ZodType);
    return z.array(z.unknown()).transform((xs) => {
      const out: unknown[] = [];
      for (const x of xs) {
        const read = element.safeParse(x);
        if (read.success) out.push(read.data);
      }
      return out;
    });
  }
  return s;
}

/** The tolerant reading schema of `schema` (see the module comment). */
export function tolerant<S extends z.ZodType>(schema: S): z.ZodType<Tolerant<z.output<S>>> {
  return tolerantSchema(schema) as z.ZodType<Tolerant<z.output<S>>>;
}
