/**
 * Facts about one GPU system (one of `../shared/perf-data/<id>/system.yaml`, derived into
 * `src/hardware/gpus.json` by `scripts/calibrate.ts`). Units: bytes, bytes/s, FLOP/s.
 */
export interface GpuSpec {
  /** Catalog id, e.g. `h200_sxm`. */
  readonly id: string;
  /** Device name as the perf tables record it, e.g. `NVIDIA H200`. */
  readonly device: string;
  readonly memCapacityBytes: number;
  readonly memBandwidth: number;
  readonly memBandwidthScaling: number;
  readonly memConstantLatencyS: number;
  readonly bf16Flops: number;
  readonly fp8Flops: number;
  readonly powerW: number;
  readonly smVersion: number;
  readonly gpusPerNode: number;
  readonly intraNodeBandwidth: number;
  readonly interNodeBandwidth: number;
  readonly pcieBandwidth: number;
  readonly p2pLatencyS: number;
  /** NCCL buffer memory per GPU by tensor-parallel size (`misc.nccl_mem`). */
  readonly ncclMemBytes: Readonly<Record<string, number>>;
  /** Runtime overhead per GPU (`misc.other_mem`). */
  readonly otherMemBytes: number;
  /** vLLM version of the measured perf tables for this GPU. */
  readonly perfDataVersion: string;
}
