/**
 * The `predict` config schema (`ai-dynamo/aisimulate@a2fa5bb:docs/reference/configuration.md`): strict at every level, reference key names and
 * defaults. `validateConfig` is the entry point: it applies the stack's section rules the way the
 * reference splits adapter sections off before validating, then runs the Zod schema.
 */
import * as z from "zod";
import { CONFIG_PARSE, fromZodIssues, type PathIssue } from "../issues.js";
import { isMapping, type Mapping, setOwn } from "../mapping.js";
import type { Stack } from "../runSpec.js";
import { Client } from "./client.js";
import { Cost } from "./cost.js";
import { Engine } from "./engine.js";
import { Evaluation } from "./evaluation.js";
import { Execution } from "./execution.js";
import { checkPlannerDocument, Planner, plannerDocumentWhen } from "./planner.js";
import { Router } from "./router.js";
import { checkTraceFormatDocument, DEFAULT_TRAFFIC, Traffic, traceFormatDocumentWhen } from "./traffic.js";

export const PredictConfig = z
  .strictObject({
    traffic: Traffic.prefault(DEFAULT_TRAFFIC),
    engine: Engine,
    router: Router.prefault({}),
    /** Omitted = `policy: disabled` (fixed replicas, `planner: null` in the report). */
    planner: Planner.prefault({}),
    evaluation: Evaluation.prefault({}),
    execution: Execution.prefault({}),
    /** fleetsim extension: client overhead and timeout (docs/client.md); defaults change nothing. */
    client: Client.prefault({}),
    /** fleetsim extension: GPU-hour prices (docs/cost.md); only prices the run, never changes it. */
    cost: Cost.prefault({}),
  })
  .superRefine(checkPlannerDocument, plannerDocumentWhen)
  .superRefine(checkTraceFormatDocument, traceFormatDocumentWhen);

export type PredictConfigOutput = z.output<typeof PredictConfig>;

/**
 * Top-level sections that are not part of the core schema: each is rejected before the schema
 * runs (and removed, so it is not reported a second time as an unknown key).
 */
function sectionIssue(section: string, stack: Stack): string | undefined {
  switch (section) {
    case "planner":
      return stack === "engine"
        ? "section 'planner' is not provided by stack 'engine'; use --stack dynamo or remove it"
        : undefined;
    case "router":
      return stack === "engine"
        ? "section 'router' is not provided by stack 'engine' (it always routes round robin); use --stack dynamo or remove it"
        : undefined;
    case "optimization":
    case "optimizer":
      return `section '${section}' is only valid for 'recommend'; 'predict' does not accept it`;
    default:
      return undefined;
  }
}

export type ValidationResult =
  | { readonly ok: true; readonly config: PredictConfigOutput }
  | { readonly ok: false; readonly issues: PathIssue[] };

export function validateConfig(raw: unknown, stack: Stack): ValidationResult {
  const issues: PathIssue[] = [];
  let input = raw;
  if (isMapping(raw)) {
    const rest: Mapping = {};
    for (const [key, value] of Object.entries(raw)) {
      const message = sectionIssue(key, stack);
      if (message === undefined) setOwn(rest, key, value);
      else issues.push({ path: [key], message, at: "key" });
    }
    input = rest;
  }
  // reportInput: the offending value of an enum issue is what its did-you-mean hint is computed from.
  const parsed = PredictConfig.safeParse(input, { ...CONFIG_PARSE, reportInput: true });
  if (!parsed.success) issues.push(...fromZodIssues(parsed.error.issues));
  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, config: parsed.data };
}
