import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  HostOffloadSpec,
  KvTransferSpec,
  LoadSpec,
  RouterSpec,
  RunSpec,
  SglangSpec,
  SlaSpec,
  WorkerRoleSpec,
} from "../../src/config/runSpec.js";
import { configFile, engineYaml, fixedTiming, syntheticTraffic } from "./configYaml.js";

export function tempDir(prefix = "fleetsim-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes trace rows (objects JSON-encoded, strings verbatim) to a fresh temp file and returns its path. */
export function writeTrace(rows: ReadonlyArray<object | string>, dir = tempDir()): string {
  const path = join(dir, "trace.jsonl");
  writeFileSync(path, rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n");
  return path;
}

/** The KV router (overlap credit and prefill load scale 1, temperature 0: no sampling), or round robin. */
export function kvOrRoundRobin(kvRouter: boolean): RouterSpec {
  return kvRouter
    ? {
        policy: "kv_router",
        overlapScoreCredit: 1,
        prefillLoadScale: 1,
        temperature: 0,
        prefillLoadModel: "none",
      }
    : { policy: "round_robin" };
}

/** The reference mocker's `sglang.*` defaults (`ai-dynamo/dynamo@a63cdfc:lib/mocker/src/scheduler/sglang/core.rs`). */
export const SGLANG_DEFAULTS_SPEC: SglangSpec = {
  schedulePolicy: "fifo",
  maxPrefillTokens: 16384,
  chunkedPrefillSize: 8192,
  clipMaxNewTokens: 4096,
  scheduleConservativeness: 1,
};

/** The role fields of an SGLang worker with those defaults. */
export const SGLANG_ROLE: Partial<WorkerRoleSpec> = { backend: "sglang", sglang: SGLANG_DEFAULTS_SPEC };

/** One worker on one GPU: every parallelism degree 1. */
export const ONE_GPU = {
  replicas: 1,
  tensor: 1,
  pipeline: 1,
  attentionData: 1,
  moeTensor: 1,
  moeExpert: 1,
  gpusPerWorker: 1,
} as const satisfies Partial<WorkerRoleSpec>;

export function role(over: Partial<WorkerRoleSpec> = {}): WorkerRoleSpec {
  return {
    ...ONE_GPU,
    maxBatchedTokens: 8192,
    maxSequences: 256,
    asyncScheduling: false,
    blockSize: 4,
    prefixCaching: true,
    numGpuBlocks: 64,
    timing: { type: "fixed", prefillMs: 10, decodeMs: 2 },
    startupSeconds: 0,
    maxModelLen: null,
    ...over,
  };
}

export function traceSpec(
  path: string,
  opts: {
    role?: Partial<WorkerRoleSpec>;
    traceBlockSize?: number;
    load?: LoadSpec;
    maxVirtualTimeMs?: number | null;
    sla?: SlaSpec | null;
  } = {},
): RunSpec {
  return {
    stack: "dynamo",
    source: { type: "trace", format: "mooncake", path, blockSize: opts.traceBlockSize ?? 4 },
    load: opts.load ?? { type: "trace_timestamps", speedup: 1 },
    stop: { requests: null, maxVirtualTimeMs: opts.maxVirtualTimeMs ?? null },
    engine: {
      mode: "aggregated",
      model: "test-model",
      hardware: "h200_sxm",
      backend: "vllm",
      aggregated: role(opts.role),
    },
    router: { policy: "round_robin" },
    sla: opts.sla ?? null,
    planner: null,
  };
}

export function disaggSpec(
  path: string,
  opts: {
    prefill?: Partial<WorkerRoleSpec>;
    decode?: Partial<WorkerRoleSpec>;
    transfer?: Partial<KvTransferSpec>;
    router?: RouterSpec;
    traceBlockSize?: number;
  } = {},
): RunSpec {
  const base = traceSpec(path, { traceBlockSize: opts.traceBlockSize });
  return {
    ...base,
    engine: {
      mode: "disaggregated",
      model: "test-model",
      hardware: "h200_sxm",
      backend: "vllm",
      prefill: role({ maxSequences: 1, ...opts.prefill }),
      decode: role(opts.decode),
      kvTransfer: {
        bytesPerToken: 1e6,
        bandwidthGBps: 1,
        timingMode: "destination_missing",
        ...opts.transfer,
      },
    },
    router: opts.router ?? { policy: "round_robin" },
  };
}

/**
 * A runnable synthetic-traffic config (fixed timing, 2 workers) in a temp dir; `requests` sets the
 * workload size, `extraYaml` is appended (e.g. an `execution:` section).
 */
export function syntheticProject(requests: number, extraYaml = "") {
  const dir = tempDir("fleetsim-res-");
  const { config } = configFile(
    syntheticTraffic("{type: concurrency, concurrency: 64}", `{requests: ${requests}}`) +
      engineYaml({ replicas: 2, blocks: 4096, timing: fixedTiming(1, 1) }) +
      extraYaml,
    { dir },
  );
  return { dir, config, out: join(dir, "out") };
}

/**
 * A host KV tier of `numHostBlocks` behind each worker's GPU cache with a slow load link (loads
 * take long enough to matter), no disk tier, unless `over` says otherwise.
 */
export function hostTier(numHostBlocks: number, over: Partial<HostOffloadSpec> = {}): HostOffloadSpec {
  return {
    numHostBlocks,
    scope: "dp_rank_local",
    d2hBandwidthGBps: 32,
    h2dBandwidthGBps: 0.05,
    latencyToFirstByteMs: 0.3,
    sharedD2hBandwidthGBps: 80,
    sharedH2dBandwidthGBps: 80,
    bytesPerBlock: 1e5,
    routerSeesHost: false,
    disk: null,
    ...over,
  };
}
