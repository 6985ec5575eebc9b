/**
 * One bad input per row: the config is RUNNABLE_ENGINE plus `--set` flags (or extra YAML), and
 * the row asserts the dotted path and the exact message of the one issue it produces.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Stack } from "../../src/config/runSpec.js";
import { catalogIds } from "../../src/model/catalog.js";
import { issueAt, loadError, RUNNABLE_ENGINE, RUNNABLE_PD_ENGINE } from "../helpers/configHelpers.js";
import { tempDir } from "../helpers/specs.js";

const ROLE = "engine.workers.aggregated";
const PREFILL = "engine.workers.prefill";
const DECODE = "engine.workers.decode";
const NOT_YET = "is not supported by fleetsim yet";

interface Case {
  readonly name: string;
  readonly sets?: readonly string[];
  /** YAML prepended to RUNNABLE_ENGINE. */
  readonly yaml?: string;
  readonly stack?: Stack;
  readonly path: string;
  readonly message: string;
}

const UNKNOWN_MODEL_MESSAGE =
  "unknown model 'acme/unknown-7b': not a local directory with config.json, not in the Hugging Face cache " +
  `(<hfhub>), and not in fleetsim's built-in catalog (fleetsim never downloads). Known ids: ${catalogIds().join(", ")}`;

/** A local checkpoint directory of an architecture fleetsim cannot price (DeepSeek-V3.2's sparse MLA). */
const SPARSE_MLA_DIR = (() => {
  const dir = tempDir("fleetsim-sparse-mla-");
  const config = {
    architectures: ["DeepseekV32ForCausalLM"],
    hidden_size: 7168,
    num_attention_heads: 128,
    num_hidden_layers: 61,
    vocab_size: 129280,
    kv_lora_rank: 512,
    index_topk: 2048,
  };
  writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  return dir;
})();

const CASES: readonly Case[] = [
  // top level
  { name: "unknown top-level key", sets: ["foo=1"], path: "foo", message: "Extra inputs are not permitted" },
  {
    name: "optimizer is recommend-only",
    yaml: "optimizer: {max_trials: 3}\n",
    path: "optimizer",
    message: "section 'optimizer' is only valid for 'recommend'; 'predict' does not accept it",
  },
  {
    name: "null section",
    yaml: "evaluation:\n",
    path: "evaluation",
    message: "Input should be a valid mapping, got null",
  },
  // traffic.source
  {
    name: "synthetic-session source without its session shape",
    sets: ["traffic.source.type=synthetic-session", "traffic.stop.sessions=1"],
    path: "traffic.source",
    message: "traffic.source.type='synthetic-session' requires session",
  },
  {
    name: "misspelt source type",
    sets: ["traffic.source.type=synth", "traffic.stop.requests=1"],
    path: "traffic.source.type",
    message: "Input should be 'synthetic', 'synthetic-session', 'synthetic-shared-prefix' or 'trace'",
  },
  {
    name: "a Weka corpus that is not there",
    sets: [
      "traffic.source={type: trace, format: weka, paths: [no-such-corpus]}",
      "traffic.load={type: trace_timestamps}",
    ],
    path: "traffic.source.paths.0",
    message: "Weka corpus not found: <dir>/no-such-corpus",
  },
  {
    name: "two trace paths",
    sets: ["traffic.source={type: trace, paths: [a, b]}"],
    path: "traffic.source.paths",
    message: "traffic.source.paths must list exactly 1 path for format 'mooncake' (got 2)",
  },
  {
    name: "trace without paths",
    sets: ["traffic.source={type: trace}"],
    path: "traffic.source",
    message: "traffic.source.type='trace' requires paths",
  },
  {
    name: "synthetic source with trace fields",
    sets: ["traffic.source={type: synthetic, paths: [a], block_size: 16}", "traffic.stop.requests=1"],
    path: "traffic.source",
    message: "traffic.source.type='synthetic' does not accept ['paths', 'block_size']",
  },
  {
    name: "trace source with token counts",
    sets: ["traffic.source={type: trace, paths: [a], input_tokens: 5}"],
    path: "traffic.source",
    message: "traffic.source.type='trace' does not accept ['input_tokens']",
  },
  {
    name: "session fields on a request source",
    sets: ["traffic.source.session={turns: 3}", "traffic.stop.requests=1"],
    path: "traffic.source",
    message: "traffic.source.type='synthetic' does not accept ['session']",
  },
  {
    name: "missing trace file",
    sets: ["traffic.source={type: trace, paths: [nope.jsonl]}"],
    path: "traffic.source.paths.0",
    message: "trace file not found: <dir>/nope.jsonl",
  },
  // traffic.load
  {
    name: "fields not allowed for the load type",
    sets: ["traffic.load={type: poisson, requests_per_second: 2, concurrency: 3}", "traffic.stop.requests=1"],
    path: "traffic.load",
    message: "traffic.load.type='poisson' does not accept ['concurrency']",
  },
  {
    name: "constant_rate without a rate",
    sets: ["traffic.load={type: constant_rate}", "traffic.stop.requests=1"],
    path: "traffic.load",
    message: "traffic.load.type='constant_rate' requires requests_per_second",
  },
  {
    name: "string concurrency",
    sets: ["traffic.load.concurrency='8'", "traffic.stop.requests=1"],
    path: "traffic.load.concurrency",
    message: "Input should be a valid integer, got string '8'",
  },
  {
    name: "fractional concurrency",
    sets: ["traffic.load.concurrency=2.5", "traffic.stop.requests=1"],
    path: "traffic.load.concurrency",
    message: "Input should be a valid integer, got number 2.5",
  },
  {
    name: "zero concurrency",
    sets: ["traffic.load.concurrency=0", "traffic.stop.requests=1"],
    path: "traffic.load.concurrency",
    message: "Input should be greater than or equal to 1",
  },
  {
    name: "infinite rate",
    sets: ["traffic.load={type: poisson, requests_per_second: .inf}", "traffic.stop.requests=1"],
    path: "traffic.load.requests_per_second",
    message: "Input should be a finite number, got .inf",
  },
  {
    name: "sessions_per_second on a request source",
    sets: ["traffic.load={type: poisson, sessions_per_second: 1}", "traffic.stop.requests=1"],
    path: "traffic.load.sessions_per_second",
    message:
      "traffic.load.sessions_per_second requires traffic.source.type='synthetic-session'; use requests_per_second",
  },
  {
    name: "kv_capacity_fraction load",
    sets: ["traffic.load={type: kv_capacity_fraction}", "traffic.stop.requests=1"],
    path: "traffic.load.type",
    message: `traffic.load.type='kv_capacity_fraction' ${NOT_YET} (supported: 'concurrency', 'poisson', 'constant_rate' or 'trace_timestamps')`,
  },
  {
    name: "trace_timestamps with a synthetic source",
    sets: ["traffic.load={type: trace_timestamps}", "traffic.stop.requests=1"],
    path: "traffic.load.type",
    message: "traffic.load.type='trace_timestamps' requires traffic.source.type='trace'",
  },
  {
    name: "poisson with a trace source",
    sets: [
      "traffic.source={type: trace, paths: [a]}",
      "traffic.load={type: poisson, requests_per_second: 1}",
    ],
    path: "traffic.load.type",
    message:
      "traffic.load.type='poisson' is not supported with traffic.source.type='trace'; use 'trace_timestamps' or 'concurrency'",
  },
  {
    name: "zero speedup",
    sets: ["traffic.source={type: trace, paths: [a]}", "traffic.load={type: trace_timestamps, speedup: 0}"],
    path: "traffic.load.speedup",
    message: "Input should be greater than 0",
  },
  // traffic.stop
  {
    name: "synthetic without stop",
    sets: ["traffic.source.type=synthetic"],
    path: "traffic.stop",
    message: "synthetic traffic requires a stop condition",
  },
  {
    name: "two count stops",
    sets: ["traffic.stop={requests: 3, requests_per_load_unit: 2}"],
    path: "traffic.stop",
    message:
      "synthetic traffic requires exactly one stop condition, got ['requests', 'requests_per_load_unit']",
  },
  {
    name: "virtual-time stop on synthetic traffic",
    sets: ["traffic.stop={requests: 3, max_virtual_time_seconds: 2}"],
    path: "traffic.stop.max_virtual_time_seconds",
    message: "traffic.stop.max_virtual_time_seconds is only valid with traffic.source.type='trace'",
  },
  {
    name: "count stop on a trace",
    sets: ["traffic.source={type: trace, paths: [a]}", "traffic.stop.requests=4"],
    path: "traffic.stop",
    message:
      "trace traffic does not accept count stops ['requests']; a trace runs to its end or to traffic.stop.max_virtual_time_seconds",
  },
  // engine
  {
    name: "missing model",
    yaml: "engine:\n  hardware: h200_sxm\n  workers: {aggregated: {}}\n",
    path: "engine.model",
    message: "Field required",
  },
  {
    name: "afd mode",
    sets: ["engine.mode=afd"],
    path: "engine.mode",
    message: `engine.mode='afd' ${NOT_YET} (supported: 'aggregated' or 'disaggregated')`,
  },
  {
    name: "misspelt mode",
    sets: ["engine.mode=disagg"],
    path: "engine.mode",
    message: "Input should be 'aggregated' or 'disaggregated'",
  },
  {
    name: "unknown backend",
    sets: ["engine.backend=tgi"],
    path: "engine.backend",
    message: "Input should be 'vllm', 'sglang' or 'trtllm'",
  },
  // backend rules (config/backends.ts, docs/backends.md)
  {
    name: "TRT-LLM disaggregated",
    yaml: RUNNABLE_PD_ENGINE,
    sets: ["engine.backend=trtllm"],
    path: "engine.backend",
    message:
      "engine.backend='trtllm' does not support engine.mode='disaggregated' (the reference rejects it too); " +
      "use engine.mode='aggregated', or backend 'vllm' or 'sglang'",
  },
  {
    name: "block size 1 on TRT-LLM",
    sets: ["engine.backend=trtllm", `${ROLE}.kv_cache.block_size=1`],
    path: `${ROLE}.kv_cache.block_size`,
    message: `${ROLE}.kv_cache.block_size must be >= 2 for backend 'trtllm'`,
  },
  {
    name: "capacity scheduler policy without TRT-LLM",
    sets: [`${ROLE}.scheduler.capacity_scheduler_policy=MAX_UTILIZATION`],
    path: `${ROLE}.scheduler.capacity_scheduler_policy`,
    message: `${ROLE}.scheduler.capacity_scheduler_policy is only valid with engine.backend='trtllm'`,
  },
  {
    name: "unknown capacity scheduler policy",
    sets: ["engine.backend=trtllm", `${ROLE}.scheduler.capacity_scheduler_policy=STATIC_BATCH`],
    path: `${ROLE}.scheduler.capacity_scheduler_policy`,
    message: "Input should be 'GUARANTEED_NO_EVICT' or 'MAX_UTILIZATION'",
  },
  {
    name: "sglang settings without SGLang",
    sets: [`${ROLE}.sglang={schedule_policy: lpm}`],
    path: `${ROLE}.sglang`,
    message: `${ROLE}.sglang is only valid with engine.backend='sglang'`,
  },
  {
    name: "SGLang page size differs from the block size",
    sets: ["engine.backend=sglang", `${ROLE}.kv_cache.block_size=16`, `${ROLE}.sglang={page_size: 8}`],
    path: `${ROLE}.sglang.page_size`,
    message: `${ROLE}.sglang.page_size (8) must equal ${ROLE}.kv_cache.block_size (16)`,
  },
  {
    name: "SGLang chunk not a whole number of pages",
    sets: ["engine.backend=sglang", `${ROLE}.sglang={page_size: 16, chunked_prefill_size: 1000}`],
    path: `${ROLE}.sglang.chunked_prefill_size`,
    message: `${ROLE}.sglang.chunked_prefill_size (1000) must be a multiple of the page size (16)`,
  },
  {
    name: "chunked prefill off on SGLang",
    sets: ["engine.backend=sglang", "engine.enable_chunked_prefill=false"],
    path: "engine.enable_chunked_prefill",
    message:
      "engine.enable_chunked_prefill=false is not supported with engine.backend='sglang' (set sglang.chunked_prefill_size instead)",
  },
  {
    name: "prefill_schedule_interval on a backend other than vLLM",
    sets: ["engine.backend=trtllm", `${ROLE}.scheduler.prefill_schedule_interval=4`],
    path: `${ROLE}.scheduler.prefill_schedule_interval`,
    message: `${ROLE}.scheduler.prefill_schedule_interval=4 is only supported with engine.backend='vllm' (as in the reference)`,
  },
  {
    name: "prefill_decode_interval on vLLM",
    sets: [`${ROLE}.scheduler.prefill_decode_interval=2`],
    path: `${ROLE}.scheduler.prefill_decode_interval`,
    message: `${ROLE}.scheduler.prefill_decode_interval=2 is only supported with engine.backend='sglang' (as in the reference)`,
  },
  {
    name: "unknown SGLang schedule policy",
    sets: ["engine.backend=sglang", `${ROLE}.sglang={schedule_policy: lof}`],
    path: `${ROLE}.sglang.schedule_policy`,
    message: "Input should be 'fifo', 'fcfs' or 'lpm'",
  },
  {
    name: "host offload on SGLang",
    sets: ["engine.backend=sglang", `${ROLE}.kv_cache.host_offload={num_host_blocks: 100}`],
    path: `${ROLE}.kv_cache.host_offload`,
    message: `${ROLE}.kv_cache.host_offload is only supported with engine.backend='vllm' (as in the reference)`,
  },
  {
    name: "speculation on TRT-LLM",
    sets: [
      "engine.backend=trtllm",
      "engine.speculation={kind: ngram, num_speculative_tokens: 2, acceptance_rates: [0.5, 0.5]}",
    ],
    path: "engine.speculation",
    message: "engine.speculation is only supported with engine.backend='vllm' (as in the reference)",
  },
  {
    name: "hardware auto",
    sets: ["engine.hardware=auto"],
    path: "engine.hardware",
    message: "engine.hardware='auto' is only valid for recommend; name a system such as 'h200_sxm'",
  },
  {
    name: "bad context_length",
    sets: ["engine.context_length=0"],
    path: "engine.context_length",
    message: "Input should be a positive integer or 'max'",
  },
  {
    name: "speculation without acceptance rates",
    sets: ["engine.speculation={kind: ngram, num_speculative_tokens: 3}"],
    path: "engine.speculation.acceptance_rates",
    message: "Field required",
  },
  {
    name: "speculation: too many draft tokens",
    sets: ["engine.speculation={num_speculative_tokens: 6, acceptance_rates: 0.5}"],
    path: "engine.speculation.num_speculative_tokens",
    message: "Input should be an integer in 1..5",
  },
  {
    name: "speculation: a rate out of [0, 1]",
    sets: ["engine.speculation={num_speculative_tokens: 2, acceptance_rates: [0.8, 1.5]}"],
    path: "engine.speculation.acceptance_rates.1",
    message: "engine.speculation.acceptance_rates.1 must be a number in [0, 1], got number 1.5",
  },
  {
    name: "speculation: one rate per draft position",
    sets: ["engine.speculation={num_speculative_tokens: 3, acceptance_rates: [0.8, 0.6]}"],
    path: "engine.speculation.acceptance_rates",
    message:
      "engine.speculation.acceptance_rates must list one rate per draft position: num_speculative_tokens is 3, got 2 rates",
  },
  {
    name: "speculation: a draft model",
    sets: ["engine.speculation={kind: draft_model, num_speculative_tokens: 2, acceptance_rates: 0.7}"],
    path: "engine.speculation.kind",
    message: `engine.speculation.kind='draft_model' ${NOT_YET} (supported: 'ngram' or 'mtp')`,
  },
  {
    name: "speculation: a misspelt key",
    sets: ["engine.speculation={num_speculative_tokens: 2, acceptance_rates: 0.7, sed: 1}"],
    path: "engine.speculation.sed",
    message: "Extra inputs are not permitted",
  },
  {
    name: "an AIC estimator knob",
    sets: ["engine.moe_backend=deepep_moe"],
    path: "engine.moe_backend",
    message: `engine.moe_backend ${NOT_YET}`,
  },
  {
    name: "nextn without its acceptance",
    sets: ["engine.nextn=2"],
    path: "engine.nextn",
    message:
      "engine.nextn=2 requires engine.nextn_accepted, the mean accepted draft tokens per step in [0, 2] (the reference assumes no acceptance either)",
  },
  {
    name: "nextn_accepted without nextn",
    sets: ["engine.nextn_accepted=0.5"],
    path: "engine.nextn_accepted",
    message:
      "engine.nextn_accepted requires engine.nextn > 0 (it is the mean accepted of the nextn MTP drafts)",
  },
  {
    name: "nextn_accepted above nextn",
    sets: ["engine.nextn=2", "engine.nextn_accepted=2.5"],
    path: "engine.nextn_accepted",
    message: "engine.nextn_accepted (2.5) must be within [0, engine.nextn] = [0, 2]",
  },
  {
    name: "nextn out of range",
    sets: [`${ROLE}.timing={type: default}`, "engine.nextn=6", "engine.nextn_accepted=1"],
    path: "engine.nextn",
    message: "Input should be an integer in 0..5",
  },
  {
    name: "nextn with engine.speculation",
    sets: [
      `${ROLE}.timing={type: default}`,
      "engine.nextn=1",
      "engine.nextn_accepted=0.8",
      "engine.speculation={kind: mtp, num_speculative_tokens: 1, acceptance_rates: 0.8}",
    ],
    path: "engine.nextn",
    message:
      "engine.nextn cannot be combined with engine.speculation (the reference rejects it too): both turn on speculative decoding; use one",
  },
  {
    name: "nextn with non-default timing",
    sets: ["engine.nextn=1", "engine.nextn_accepted=0.8"],
    path: "engine.nextn",
    message:
      "engine.nextn needs timing type 'default' in every role, as in the reference (AIConfigurator prices it); " +
      "engine.workers.aggregated.timing.type is 'polynomial' (engine.speculation with kind 'mtp' runs with any timing)",
  },
  {
    name: "nextn with SGLang's mixed chunk (SGLang turns it off under speculative decoding)",
    sets: [
      `${ROLE}.timing={type: default}`,
      "engine.backend=sglang",
      "engine.nextn=1",
      "engine.nextn_accepted=0.8",
      `${ROLE}.sglang={enable_mixed_chunk: true}`,
    ],
    path: `${ROLE}.sglang.enable_mixed_chunk`,
    message:
      `${ROLE}.sglang.enable_mixed_chunk=true cannot be combined with engine.nextn: SGLang turns mixed chunked ` +
      "prefill off under speculative decoding; set it false, or drop engine.nextn",
  },
  {
    name: "nextn on SGLang with non-default timing",
    sets: ["engine.backend=sglang", "engine.nextn=1", "engine.nextn_accepted=0.8"],
    path: "engine.nextn",
    message:
      "engine.nextn needs timing type 'default' in every role, as in the reference (AIConfigurator prices it); " +
      "engine.workers.aggregated.timing.type is 'polynomial' (engine.speculation with kind 'mtp' runs with any timing)",
  },
  {
    name: "engine.speculation on SGLang (the reference's ngram speculation is vLLM-only)",
    sets: ["engine.backend=sglang", "engine.speculation={num_speculative_tokens: 1, acceptance_rates: 0.5}"],
    path: "engine.speculation",
    message: "engine.speculation is only supported with engine.backend='vllm' (as in the reference)",
  },
  {
    name: "kv_transfer in aggregated mode",
    sets: ["engine.kv_transfer={bandwidth_gb_per_second: 50}"],
    path: "engine.kv_transfer",
    message: "engine.kv_transfer is only valid with engine.mode='disaggregated'",
  },
  {
    name: "prefill role in aggregated mode",
    sets: ["engine.workers.prefill={}"],
    path: "engine.workers.prefill",
    message:
      "engine.workers.prefill requires engine.mode='disaggregated'; engine.mode='aggregated' accepts only workers.aggregated",
  },
  {
    name: "decode role in aggregated mode",
    sets: ["engine.workers.decode={timing: {type: polynomial}}"],
    path: "engine.workers.decode",
    message:
      "engine.workers.decode requires engine.mode='disaggregated'; engine.mode='aggregated' accepts only workers.aggregated",
  },
  {
    name: "hardware on the aggregated role",
    sets: [`${ROLE}.hardware=h100_sxm`],
    path: `${ROLE}.hardware`,
    message: `${ROLE}.hardware is only valid on prefill/decode roles; set engine.hardware instead`,
  },
  {
    name: "unknown model with context_length max",
    sets: ["engine.model=acme/unknown-7b"],
    path: "engine.context_length",
    message:
      "cannot resolve context_length 'max' for model 'acme/unknown-7b' offline: no config.json in a local model " +
      "directory or the Hugging Face cache, and the model is not in fleetsim's built-in catalog. " +
      "Set engine.context_length to an integer",
  },
  // disaggregated mode (RUNNABLE_PD_ENGINE)
  {
    name: "aggregated role in disaggregated mode",
    yaml: RUNNABLE_PD_ENGINE,
    sets: ["engine.workers.aggregated={}"],
    path: "engine.workers.aggregated",
    message:
      "engine.workers.aggregated requires engine.mode='aggregated'; engine.mode='disaggregated' accepts only workers.prefill and workers.decode",
  },
  {
    name: "disaggregated mode without a decode role",
    yaml: RUNNABLE_PD_ENGINE.slice(0, RUNNABLE_PD_ENGINE.indexOf("    decode:")),
    path: DECODE,
    message: "Field required",
  },
  {
    name: "mismatched P/D block sizes",
    yaml: RUNNABLE_PD_ENGINE,
    sets: [`${PREFILL}.kv_cache.block_size=32`],
    path: `${DECODE}.kv_cache.block_size`,
    message:
      `${DECODE}.kv_cache.block_size (64) must equal ${PREFILL}.kv_cache.block_size (32): ` +
      "prefill and decode workers hand KV over in whole blocks",
  },
  {
    name: "hardware auto on a P/D role",
    yaml: RUNNABLE_PD_ENGINE,
    sets: [`${PREFILL}.hardware=auto`],
    path: `${PREFILL}.hardware`,
    message: `${PREFILL}.hardware='auto' is only valid for recommend; name a system such as 'h200_sxm'`,
  },
  {
    name: "unknown GPU on a P/D role",
    yaml: RUNNABLE_PD_ENGINE,
    sets: [`${PREFILL}.hardware=tpu_v9`, `${PREFILL}.kv_cache.capacity={type: default}`],
    path: `${PREFILL}.hardware`,
    message:
      "unknown GPU 'tpu_v9'; known: a100_sxm, a100_sxm_40gb, b200_sxm, gb200, h100_sxm, h200_sxm, h20_3e, l40s, mi300x",
  },
  {
    name: "bad kv_transfer timing_mode",
    yaml: RUNNABLE_PD_ENGINE,
    sets: ["engine.kv_transfer.timing_mode=eager"],
    path: "engine.kv_transfer.timing_mode",
    message: "Input should be 'destination_missing' or 'full_prompt'",
  },
  {
    name: "negative kv_transfer bandwidth",
    yaml: RUNNABLE_PD_ENGINE,
    sets: ["engine.kv_transfer.bandwidth_gb_per_second=-5"],
    path: "engine.kv_transfer.bandwidth_gb_per_second",
    message: "Input should be greater than 0",
  },
  {
    name: "zero kv_transfer bytes_per_token",
    yaml: RUNNABLE_PD_ENGINE,
    sets: ["engine.kv_transfer.bytes_per_token=0"],
    path: "engine.kv_transfer.bytes_per_token",
    message: "Input should be a positive number or 'auto'",
  },
  {
    name: "unknown kv_transfer key",
    yaml: RUNNABLE_PD_ENGINE,
    sets: ["engine.kv_transfer.latency_ms=1"],
    path: "engine.kv_transfer.latency_ms",
    message: "Extra inputs are not permitted",
  },
  {
    name: "unknown model with auto kv_transfer bytes_per_token",
    yaml: RUNNABLE_PD_ENGINE,
    sets: ["engine.model=acme/unknown-7b", "engine.context_length=4096"],
    path: "engine.kv_transfer.bytes_per_token",
    message:
      "engine.kv_transfer.bytes_per_token='auto' derives the size from the model; set a number of bytes instead, " +
      `or fix the model: ${UNKNOWN_MODEL_MESSAGE}`,
  },
  // workers.aggregated
  {
    name: "MoE parallelism that adds GPUs",
    sets: [`${ROLE}.parallelism.moe_expert=2`],
    path: `${ROLE}.parallelism.moe_expert`,
    message:
      `${ROLE}.parallelism.moe_expert: moe_tensor × moe_expert (1 × 2) must equal tensor × attention_data ` +
      "(1 × 1): MoE parallelism repartitions the worker's GPUs",
  },
  {
    name: "unknown GPU for the op-level model",
    sets: ["engine.hardware=tpu_v9", `${ROLE}.timing={type: default}`],
    path: "engine.hardware",
    message:
      "unknown GPU 'tpu_v9'; known: a100_sxm, a100_sxm_40gb, b200_sxm, gb200, h100_sxm, h200_sxm, h20_3e, l40s, mi300x",
  },
  {
    name: "context parallelism",
    sets: [`${ROLE}.parallelism.decode_context=2`],
    path: `${ROLE}.parallelism.decode_context`,
    message: `${ROLE}.parallelism.decode_context=2 ${NOT_YET} (only 1)`,
  },
  {
    name: "negative prefill_decode_interval",
    sets: [`${ROLE}.scheduler.prefill_decode_interval=-1`],
    path: `${ROLE}.scheduler.prefill_decode_interval`,
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "block size 1 on vLLM",
    sets: [`${ROLE}.kv_cache.block_size=1`],
    path: `${ROLE}.kv_cache.block_size`,
    message: `${ROLE}.kv_cache.block_size must be >= 2 for backend 'vllm'`,
  },
  {
    name: "prefix_caching as a string",
    sets: [`${ROLE}.kv_cache.prefix_caching=yes`],
    path: `${ROLE}.kv_cache.prefix_caching`,
    message: "Input should be a valid boolean, got string 'yes'",
  },
  {
    name: "bytes_per_token zero",
    sets: [`${ROLE}.kv_cache.bytes_per_token=0`],
    path: `${ROLE}.kv_cache.bytes_per_token`,
    message: "Input should be a positive number or 'auto'",
  },
  {
    name: "fixed capacity with memory_fraction",
    sets: [`${ROLE}.kv_cache.capacity.memory_fraction=0.5`],
    path: `${ROLE}.kv_cache.capacity`,
    message: `${ROLE}.kv_cache.capacity.type='fixed' does not accept ['memory_fraction']`,
  },
  {
    name: "fixed capacity with both blocks and bytes",
    sets: [`${ROLE}.kv_cache.capacity.bytes=1000000`],
    path: `${ROLE}.kv_cache.capacity`,
    message: `${ROLE}.kv_cache.capacity.type='fixed' requires exactly one of blocks or bytes`,
  },
  {
    name: "fixed capacity bytes without explicit block size",
    sets: [`${ROLE}.kv_cache={bytes_per_token: 1024, capacity: {type: fixed, bytes: 1000000}}`],
    path: `${ROLE}.kv_cache.capacity.bytes`,
    message: `${ROLE}.kv_cache.capacity.bytes requires an explicit ${ROLE}.kv_cache.block_size and a numeric ${ROLE}.kv_cache.bytes_per_token`,
  },
  {
    name: "fixed capacity bytes smaller than one block",
    sets: [`${ROLE}.kv_cache={block_size: 16, bytes_per_token: 1024, capacity: {type: fixed, bytes: 1000}}`],
    path: `${ROLE}.kv_cache.capacity.bytes`,
    message: `${ROLE}.kv_cache.capacity.bytes=1000 holds no full KV block (block_size 16 x bytes_per_token 1024 bytes)`,
  },
  {
    name: "default capacity with blocks",
    sets: [`${ROLE}.kv_cache.capacity.type=default`],
    path: `${ROLE}.kv_cache.capacity`,
    message: `${ROLE}.kv_cache.capacity.type='default' does not accept ['blocks']`,
  },
  {
    name: "memory_fraction above 1",
    sets: [`${ROLE}.kv_cache.capacity={memory_fraction: 1.5}`],
    path: `${ROLE}.kv_cache.capacity.memory_fraction`,
    message: "Input should be less than or equal to 1",
  },
  {
    name: "weights that do not fit in GPU memory",
    sets: ["engine.model=meta-llama/Llama-3.1-405B", `${ROLE}.kv_cache.capacity={type: default}`],
    path: `${ROLE}.kv_cache.capacity`,
    message:
      "meta-llama/Llama-3.1-405B (BF16) needs 811.7 GB of weights per GPU at tensor=1, pipeline=1; h200_sxm has " +
      "141.0 GiB (126.9 GiB at memory_fraction 0.9); with activations 2.8 GiB, runtime 3.5 GiB, NCCL 0.0 GiB and " +
      "CUDA graphs 0.0 GiB no memory is left for the KV cache; raise tensor or pipeline",
  },
  {
    name: "unknown model for the default capacity",
    sets: ["engine.model=acme/unknown-7b", `${ROLE}.kv_cache.capacity={type: default}`],
    path: "engine.model",
    message: UNKNOWN_MODEL_MESSAGE,
  },
  {
    name: "G3 (disk) offload without a host tier",
    sets: [`${ROLE}.kv_cache.g3_offload={num_g3_blocks: 10}`],
    path: `${ROLE}.kv_cache.g3_offload`,
    message: `${ROLE}.kv_cache.g3_offload requires ${ROLE}.kv_cache.host_offload: disk blocks are staged through host memory`,
  },
  {
    name: "worker-local disks behind a cluster-shared host tier",
    sets: [
      `${ROLE}.kv_cache.host_offload={num_host_blocks: 100, scope: cluster_shared}`,
      `${ROLE}.kv_cache.g3_offload={num_g3_blocks: 10}`,
    ],
    path: `${ROLE}.kv_cache.g3_offload.scope`,
    message: `${ROLE}.kv_cache.g3_offload.scope 'worker_local' needs ${ROLE}.kv_cache.host_offload.scope 'dp_rank_local': a cluster-shared host tier has no one worker to own a local disk`,
  },
  {
    name: "fixed timing without decode_ms",
    sets: [`${ROLE}.timing={type: fixed, prefill_ms: 3}`],
    path: `${ROLE}.timing`,
    message: `${ROLE}.timing.type='fixed' requires ['decode_ms']`,
  },
  {
    name: "polynomial timing with prefill_ms",
    sets: [`${ROLE}.timing.prefill_ms=3`],
    path: `${ROLE}.timing`,
    message: `${ROLE}.timing.type='polynomial' does not accept ['prefill_ms']`,
  },
  {
    name: "negative fixed timing",
    sets: [`${ROLE}.timing={type: fixed, prefill_ms: -1, decode_ms: 1}`],
    path: `${ROLE}.timing.prefill_ms`,
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "the FPM forward model",
    sets: [`${ROLE}.timing={type: default, forward_model: fpm}`],
    path: `${ROLE}.timing.forward_model`,
    message: `${ROLE}.timing: the whole-forward FPM model ${NOT_YET}; use forward_model: op_level (the default)`,
  },
  {
    name: "an architecture the op-level model cannot price",
    sets: [`engine.model=${SPARSE_MLA_DIR}`, `${ROLE}.timing={type: default}`],
    path: "engine.model",
    message:
      `${SPARSE_MLA_DIR}: architecture DeepseekV32ForCausalLM (MLA + sparse attention) is not supported by ` +
      "fleetsim's timing model yet; supported: LlamaForCausalLM, MistralForCausalLM, Qwen3ForCausalLM, " +
      "Qwen3MoeForCausalLM, MixtralForCausalLM, DeepseekV2ForCausalLM, DeepseekV3ForCausalLM",
  },
  {
    name: "negative startup_seconds",
    sets: [`${ROLE}.startup_seconds=-5`],
    path: `${ROLE}.startup_seconds`,
    message: "Input should be greater than or equal to 0",
  },
  // router
  {
    name: "unknown router policy",
    sets: ["router.policy=random"],
    path: "router.policy",
    message: "Input should be 'round_robin' or 'kv_router'",
  },
  {
    name: "kv_router overlap_score_credit above 1",
    sets: ["router={policy: kv_router, overlap_score_credit: 1.5}"],
    path: "router.overlap_score_credit",
    message: "Input should be less than or equal to 1",
  },
  {
    name: "kv_router negative overlap_score_credit",
    sets: ["router={policy: kv_router, overlap_score_credit: -0.5}"],
    path: "router.overlap_score_credit",
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "kv_router negative temperature",
    sets: ["router={policy: kv_router, temperature: -1}"],
    path: "router.temperature",
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "kv_router infinite prefill_load_scale",
    sets: ["router={policy: kv_router, prefill_load_scale: .inf}"],
    path: "router.prefill_load_scale",
    message: "Input should be a finite number, got .inf",
  },
  {
    name: "kv_router unknown prefill load model",
    sets: ["router={policy: kv_router, prefill_load_model: {type: fpm}}"],
    path: "router.prefill_load_model.type",
    message: "Input should be 'none' or 'aic'",
  },
  {
    name: "aic prefill load model with round robin",
    sets: ["router.prefill_load_model.type=aic"],
    path: "router.prefill_load_model.type",
    message:
      "router.prefill_load_model.type: 'aic' is incompatible with router.policy='round_robin'; use policy='kv_router' or type='none'",
  },
  {
    name: "kv-router knob with round robin",
    sets: ["router.overlap_score_credit=0.5"],
    path: "router.overlap_score_credit",
    message:
      "router.overlap_score_credit: 0.5 is incompatible with router.policy='round_robin'; use policy='kv_router' or remove router.overlap_score_credit",
  },
  {
    name: "temperature with round robin",
    sets: ["router.temperature=0.5"],
    path: "router.temperature",
    message:
      "router.temperature: 0.5 is incompatible with router.policy='round_robin'; use policy='kv_router' or remove router.temperature",
  },
  {
    name: "router section on the engine stack",
    sets: ["router.policy=round_robin"],
    stack: "engine",
    path: "router",
    message:
      "section 'router' is not provided by stack 'engine' (it always routes round robin); use --stack dynamo or remove it",
  },
  // planner
  {
    name: "planner section on the engine stack",
    yaml: "planner: {policy: enabled}\n",
    stack: "engine",
    path: "planner",
    message: "section 'planner' is not provided by stack 'engine'; use --stack dynamo or remove it",
  },
  {
    name: "null planner section",
    yaml: "planner:\n",
    path: "planner",
    message: "Input should be a valid mapping, got null",
  },
  {
    name: "unknown planner key",
    yaml: "planner: {policy: enabled, scale_interval_seconds: 5}\n",
    path: "planner.scale_interval_seconds",
    message: "Extra inputs are not permitted",
  },
  {
    name: "planner retune without an interval",
    yaml: "planner: {policy: enabled, retune: {}}\n",
    path: "planner.retune.interval_seconds",
    message: "Field required",
  },
  {
    name: "unknown planner target",
    sets: ["planner.target=goodput"],
    path: "planner.target",
    message: "Input should be 'throughput', 'latency', 'load' or 'sla'",
  },
  {
    name: "unknown load predictor",
    sets: ["planner.load_predictor=lstm"],
    path: "planner.load_predictor",
    message: "Input should be 'constant', 'arima', 'prophet' or 'kalman'",
  },
  {
    name: "FPM bucket size not a perfect square",
    sets: ["planner.fpm_sample_bucket_size=10"],
    path: "planner.fpm_sample_bucket_size",
    message: "planner.fpm_sample_bucket_size must be a perfect square (1, 4, 9, 16, ...), got 10",
  },
  {
    name: "load scaling sensitivity above 100",
    sets: ["planner.load_scaling_down_sensitivity=120"],
    path: "planner.load_scaling_down_sensitivity",
    message: "Input should be less than or equal to 100",
  },
  {
    name: "zero GPU budget",
    sets: ["planner.max_num_gpus=0"],
    path: "planner.max_num_gpus",
    message: "Input should be a positive integer or -1",
  },
  {
    name: "negative role minimum",
    yaml: "planner: {policy: enabled, min_workers: -1}\n",
    path: "planner.min_workers",
    message: "Input should be greater than or equal to 0",
  },
  {
    name: "planner interval not a number",
    sets: ["planner.load_adjustment_interval_seconds=soon"],
    path: "planner.load_adjustment_interval_seconds",
    message: "Input should be a valid number, got string 'soon'",
  },
  {
    name: "advisory with the planner disabled",
    yaml: "planner: {policy: disabled, advisory: true}\n",
    path: "planner.advisory",
    message: "planner.advisory=true requires planner.policy='enabled' (policy 'disabled' runs no Planner)",
  },
  {
    name: "sla target without itl_ms",
    yaml: "planner: {policy: enabled, target: sla}\nevaluation: {sla: {ttft_ms: 500}}\n",
    path: "planner.target",
    message:
      "planner.target='sla' requires evaluation.sla.ttft_ms and evaluation.sla.itl_ms as the Planner's targets; missing: evaluation.sla.itl_ms",
  },
  {
    name: "sla target without an SLA",
    yaml: "planner: {policy: enabled, target: sla}\n",
    path: "planner.target",
    message:
      "planner.target='sla' requires evaluation.sla.ttft_ms and evaluation.sla.itl_ms as the Planner's targets; missing: evaluation.sla.ttft_ms, evaluation.sla.itl_ms",
  },
  {
    name: "sla target with an e2e-only SLA",
    yaml: "planner: {policy: enabled, target: sla}\nevaluation: {sla: {e2e_ms: 20000}}\n",
    path: "planner.target",
    message:
      "planner.target='sla' requires evaluation.sla.ttft_ms and evaluation.sla.itl_ms as the Planner's targets; an SLA with only evaluation.sla.e2e_ms cannot set them",
  },
  {
    name: "sla target with both scaling modes off",
    yaml:
      "planner: {policy: enabled, target: sla, enable_throughput_scaling: false, enable_load_scaling: false}\n" +
      "evaluation: {sla: {ttft_ms: 500, itl_ms: 50}}\n",
    path: "planner",
    message:
      "planner.policy='enabled' needs a scaling mode: with planner.target='sla', set planner.enable_throughput_scaling or planner.enable_load_scaling to true",
  },
  {
    name: "load interval not below the throughput interval",
    yaml:
      "planner:\n  policy: enabled\n  target: sla\n  enable_load_scaling: true\n" +
      "  throughput_adjustment_interval_seconds: 300\n  load_adjustment_interval_seconds: 300\n" +
      "evaluation: {sla: {ttft_ms: 500, itl_ms: 50}}\n",
    path: "planner.load_adjustment_interval_seconds",
    message:
      "planner.load_adjustment_interval_seconds (300) must be less than planner.throughput_adjustment_interval_seconds (300) when both load and throughput scaling are enabled",
  },
  {
    name: "null interval of an enabled mode",
    yaml: "planner: {policy: enabled, load_adjustment_interval_seconds: null}\n",
    path: "planner.load_adjustment_interval_seconds",
    message:
      "planner.load_adjustment_interval_seconds is null, but load scaling is enabled; set a number of seconds > 0 or remove it",
  },
  {
    name: "interval off the millisecond grid",
    yaml: "planner: {policy: enabled, load_adjustment_interval_seconds: 0.0015}\n",
    path: "planner.load_adjustment_interval_seconds",
    message:
      "planner.load_adjustment_interval_seconds (0.0015) must be a multiple of the Planner's scale interval 0.002 s (the millisecond gcd of the enabled adjustment intervals)",
  },
  {
    name: "interval under a millisecond",
    yaml: "planner: {policy: enabled, load_adjustment_interval_seconds: 0.0001}\n",
    path: "planner.load_adjustment_interval_seconds",
    message:
      "planner.load_adjustment_interval_seconds must be at least 0.001: the Planner schedules in whole milliseconds",
  },
  {
    name: "prefill_min_workers in aggregated mode",
    yaml: "planner: {policy: enabled, prefill_min_workers: 1}\n",
    path: "planner.prefill_min_workers",
    message:
      "planner.prefill_min_workers requires engine.mode='disaggregated'; with engine.mode='aggregated' use planner.min_workers",
  },
  {
    name: "decode_min_workers in aggregated mode",
    yaml: "planner: {policy: enabled, decode_min_workers: 2}\n",
    path: "planner.decode_min_workers",
    message:
      "planner.decode_min_workers requires engine.mode='disaggregated'; with engine.mode='aggregated' use planner.min_workers",
  },
  {
    name: "missing warmup trace",
    yaml: "planner: {policy: enabled, load_predictor_warmup_trace: warmup/missing.jsonl}\n",
    path: "planner.load_predictor_warmup_trace",
    message:
      "<dir>/warmup/missing.jsonl: trace file not found (relative paths resolve against the working directory)",
  },
  // evaluation / execution
  {
    name: "e2e with ttft",
    sets: ["evaluation.sla={e2e_ms: 1000, ttft_ms: 100}"],
    path: "evaluation.sla",
    message:
      "evaluation.sla.e2e_ms is mutually exclusive with evaluation.sla.ttft_ms and evaluation.sla.itl_ms",
  },
  {
    name: "non-positive SLA",
    sets: ["evaluation.sla.itl_ms=0"],
    path: "evaluation.sla.itl_ms",
    message: "Input should be greater than 0",
  },
  {
    name: "unknown execution key",
    sets: ["execution.resources.gpus=2"],
    path: "execution.resources.gpus",
    message: "Extra inputs are not permitted",
  },
  {
    name: "cpu_limit not an int",
    sets: ["execution.resources.cpu_limit=1.5"],
    path: "execution.resources.cpu_limit",
    message: "Input should be a positive integer or 'auto'",
  },
];

describe("bad inputs", () => {
  it("has at least 20 distinct cases", () => {
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
    expect(CASES.length).toBeGreaterThanOrEqual(20);
  });

  it.each(CASES)("$name", (c) => {
    const yaml = c.yaml?.startsWith("engine:") ? c.yaml : `${c.yaml ?? ""}${RUNNABLE_ENGINE}`;
    const err = loadError(yaml, { sets: c.sets, stack: c.stack });
    expect(err.issues, err.format()).toHaveLength(1);
    const issue = issueAt(err, c.path);
    const dir = err.configPath.slice(0, err.configPath.lastIndexOf("/"));
    expect(issue.message.replace(/\(\/[^)]*hub\)/, "(<hfhub>)")).toBe(c.message.replace("<dir>", dir));
    // Every issue says where it came from.
    expect(issue.source !== undefined || issue.line !== undefined).toBe(true);
  });
});
