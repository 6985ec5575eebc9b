import { parse } from "yaml";
import { HardwareError } from "./errors.js";
import type { GpuSpec } from "./gpu.js";

/** Reads a number at `path` of a parsed YAML document; throws `HardwareError` naming the file. */
function num(doc: unknown, path: readonly string[], source: string): number {
  let cur: unknown = doc;
  for (const key of path) {
    cur = typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[key] : undefined;
  }
  if (typeof cur !== "number" || !Number.isFinite(cur)) {
    throw new HardwareError(`${source}: expected a number at ${path.join(".")}`);
  }
  return cur;
}

function optNum(doc: unknown, path: readonly string[]): number | undefined {
  let cur: unknown = doc;
  for (const key of path) {
    cur = typeof cur === "object" && cur !== null ? (cur as Record<string, unknown>)[key] : undefined;
  }
  return typeof cur === "number" && Number.isFinite(cur) ? cur : undefined;
}

/**
 * `GpuSpec` from the text of an AIConfigurator `systems/<id>.yaml` (`system.yaml` in the perf-data
 * tree). `device` is the name the perf tables record; `perfDataVersion` the vLLM version directory.
 * A GPU without `fp8_tc_flops` (A100) gets `2 × bfloat16_tc_flops`, AIConfigurator's fallback
 * (`GEMM._get_quant_tc_flops`); it has no FP8 tables anyway.
 */
export function parseSystemYaml(
  text: string,
  id: string,
  device: string,
  perfDataVersion: string,
  source = `${id}/system.yaml`,
): GpuSpec {
  const doc: unknown = parse(text);
  const bf16 = num(doc, ["gpu", "bfloat16_tc_flops"], source);
  const ncclRaw =
    typeof doc === "object" && doc !== null
      ? ((doc as Record<string, unknown>)["misc"] as Record<string, unknown> | undefined)?.["nccl_mem"]
      : undefined;
  const ncclMemBytes: Record<string, number> = {};
  if (typeof ncclRaw === "object" && ncclRaw !== null) {
    for (const [tp, bytes] of Object.entries(ncclRaw)) {
      if (typeof bytes === "number") ncclMemBytes[tp] = bytes;
    }
  }
  return {
    id,
    device,
    memCapacityBytes: num(doc, ["gpu", "mem_capacity"], source),
    memBandwidth: num(doc, ["gpu", "mem_bw"], source),
    memBandwidthScaling: num(doc, ["gpu", "mem_bw_empirical_scaling_factor"], source),
    memConstantLatencyS: num(doc, ["gpu", "mem_empirical_constant_latency"], source),
    bf16Flops: bf16,
    fp8Flops: optNum(doc, ["gpu", "fp8_tc_flops"]) ?? 2 * bf16,
    powerW: num(doc, ["gpu", "power"], source),
    smVersion: num(doc, ["gpu", "sm_version"], source),
    gpusPerNode: num(doc, ["node", "num_gpus_per_node"], source),
    intraNodeBandwidth: num(doc, ["node", "intra_node_bw"], source),
    interNodeBandwidth: num(doc, ["node", "inter_node_bw"], source),
    pcieBandwidth: num(doc, ["node", "pcie_bw"], source),
    p2pLatencyS: num(doc, ["node", "p2p_latency"], source),
    ncclMemBytes,
    otherMemBytes: num(doc, ["misc", "other_mem"], source),
    perfDataVersion,
  };
}
