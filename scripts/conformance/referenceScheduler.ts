/**
 * The `--set` arguments that give fleetsim the reference's scheduler on a conformance config:
 * the reference's vLLM core schedules synchronously, and fleetsim's vLLM roles default to the
 * asynchronous scheduling of vLLM ≥ 0.14 (src/config/asyncScheduling.ts; docs/conformance.md,
 * Known differences). The reference rejects the key, so the shared YAML cannot carry it.
 */
import { parse } from "yaml";

export function referenceSchedulerSets(configYaml: string): string[] {
  let doc: { engine?: { mode?: string; backend?: string } } | null;
  try {
    doc = parse(configYaml) as typeof doc;
  } catch {
    return []; // a bad-input case: fleetsim reports it as the reference does, nothing to set
  }
  const engine = doc?.engine;
  if (engine === undefined || (engine.backend ?? "vllm") !== "vllm") return [];
  const roles = engine.mode === "disaggregated" ? ["prefill", "decode"] : ["aggregated"];
  return roles.flatMap((r) => ["--set", `engine.workers.${r}.scheduler.async_scheduling=false`]);
}
