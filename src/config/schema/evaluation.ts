/** `evaluation:` — the SLA the report's goodput metrics are measured against. */
import * as z from "zod";
import { fail, PATH, posNum } from "./primitives.js";

export const Sla = z
  .strictObject({
    ttft_ms: posNum().optional(),
    itl_ms: posNum().optional(),
    e2e_ms: posNum().optional(),
  })
  .superRefine((sla, ctx) => {
    if (sla.e2e_ms !== undefined && (sla.ttft_ms !== undefined || sla.itl_ms !== undefined)) {
      fail(ctx, `${PATH}.e2e_ms is mutually exclusive with ${PATH}.ttft_ms and ${PATH}.itl_ms`);
    }
  });

export type SlaConfig = z.output<typeof Sla>;

export const Evaluation = z.strictObject({ sla: Sla.optional() });
