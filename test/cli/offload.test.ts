/**
 * `kv_cache.host_offload` end to end (docs/offload.md): a host tier behind a small GPU cache
 * raises prefix reuse and lowers TTFT on the bundled trace, reports what it did, changes nothing
 * when it is smaller than the GPU cache, and is refused where it would do nothing.
 */
import { describe, expect, it } from "vitest";
import { HOST_TIME_KEYS } from "../../src/metrics/summary.js";
import { cli, predictExample, setFlags } from "../helpers/cli.js";

const ROLE = "engine.workers.aggregated";

async function run(hostOffload: string, ...more: string[]) {
  const r = await predictExample(
    [`${ROLE}.kv_cache.capacity={type: fixed, blocks: 600}`, `${ROLE}.kv_cache.host_offload=${hostOffload}`],
    ...more,
  );
  return { r, doc: r.doc };
}

describe("KV host offload", () => {
  it("loads evicted prefixes back: more reuse, lower TTFT, and a report of what the tier did", async () => {
    const off = await run("null");
    const on = await run("{num_host_blocks: 20000}");
    expect(off.doc.kv_offload).toBeUndefined();
    const k = on.doc.kv_offload;
    expect(k).toMatchObject({
      scope: "dp_rank_local",
      tiers: 2,
      host_blocks_per_tier: 20000,
      evicted_blocks: 0,
    });
    expect(k.loads).toBeGreaterThan(10);
    expect(k.loaded_tokens).toBe(k.loaded_blocks * 64);
    // Llama-3.1-8B FP8 at TP1: 65,536 KV bytes per token, 64-token blocks.
    expect(k.loaded_bytes_per_gpu).toBe(k.loaded_blocks * 64 * 65536);
    // 4 MiB blocks over 32 GB/s: about 0.13 ms per block loaded.
    expect(k.mean_load_ms).toBeGreaterThan(0);
    expect(k.mean_load_ms).toBeLessThan((k.loaded_blocks / k.loads) * 0.2);
    expect(on.doc.summary.prefix_cache_reused_ratio).toBeGreaterThan(
      off.doc.summary.prefix_cache_reused_ratio + 0.03,
    );
    expect(on.doc.summary.mean_ttft_ms).toBeLessThan(off.doc.summary.mean_ttft_ms);
    expect(on.doc.summary.completed_requests).toBe(off.doc.summary.completed_requests);
    expect(on.r.out).toMatch(
      /KV Host Offload: \d+ loads, [\d,]+ tokens from host \(mean load [\d.]+ ms\), 0 blocks evicted/,
    );
  });

  it("is deterministic: the same config gives the same bytes except host time", async () => {
    const a = await run("{num_host_blocks: 5000}");
    const b = await run("{num_host_blocks: 5000}");
    for (const d of [a.doc, b.doc]) for (const k of HOST_TIME_KEYS) delete d.summary[k];
    expect(b.doc).toEqual(a.doc);
  });

  it("a cluster-shared tier lets a worker load what another one computed", async () => {
    const local = await run("{num_host_blocks: 20000}");
    const shared = await run("{num_host_blocks: 20000, scope: cluster_shared}");
    expect(shared.doc.kv_offload).toMatchObject({ scope: "cluster_shared", tiers: 1 });
    // Round robin spreads a conversation's turns over both workers: only a shared tier serves them all.
    expect(shared.doc.kv_offload.loaded_blocks).toBeGreaterThan(local.doc.kv_offload.loaded_blocks);
    expect(shared.doc.summary.prefix_cache_reused_ratio).toBeGreaterThan(
      local.doc.summary.prefix_cache_reused_ratio,
    );
  });

  it("the KV router that also sees host blocks sends more requests where their prefix is offloaded", async () => {
    const router = ["--stack", "dynamo", "--set", "router={policy: kv_router}"];
    const blind = await run("{num_host_blocks: 20000}", ...router);
    const sees = await run("{num_host_blocks: 20000, router_sees_host: true}", ...router);
    expect(sees.doc.kv_offload.loaded_tokens).toBeGreaterThan(blind.doc.kv_offload.loaded_tokens);
  });

  it("changes nothing when the host tier is no larger than what the GPU already caches", async () => {
    const off = await run("null");
    const small = await run("{num_host_blocks: 300}");
    expect(small.doc.kv_offload.loads).toBe(0);
    expect(small.doc.kv_offload.evicted_blocks).toBeGreaterThan(0);
    expect(small.doc.summary.mean_ttft_ms).toBe(off.doc.summary.mean_ttft_ms);
    expect(small.doc.summary.mean_e2e_latency_ms).toBe(off.doc.summary.mean_e2e_latency_ms);
  });

  it("a slow link makes loads slower than a fast one", async () => {
    const fast = await run("{num_host_blocks: 20000, h2d_bandwidth_gbps: 64}");
    const slow = await run("{num_host_blocks: 20000, h2d_bandwidth_gbps: 2, latency_to_first_byte_ms: 5}");
    expect(slow.doc.kv_offload.mean_load_ms).toBeGreaterThan(fast.doc.kv_offload.mean_load_ms * 10);
  });

  it.each([
    ["{scope: dp_rank_local}", [], `${ROLE}.kv_cache.host_offload.num_host_blocks`],
    [
      "{num_host_blocks: 100, scope: cluster_shared, router_sees_host: true}",
      [],
      "router_sees_host needs scope 'dp_rank_local'",
    ],
    ["{num_host_blocks: 100, h2d_bandwidth_gbps: 0}", [], "h2d_bandwidth_gbps"],
  ])("refuses %s with exit 2 naming the key", async (value, more, message) => {
    const { r } = await run(value, ...more);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.err).not.toContain("    at ");
  });

  it("refuses a host tier on a decode role, where no request is admitted from a queue", async () => {
    const r = await cli(
      "validate",
      "--stack",
      "dynamo",
      "-c",
      "examples/seed-disaggregated.yaml",
      ...setFlags(
        "traffic.source.paths=[sample_trace.jsonl]",
        "engine.workers.decode.kv_cache.host_offload={num_host_blocks: 1000}",
      ),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain("engine.workers.decode.kv_cache.host_offload is not supported on a decode role");
  });
});

describe("kv_cache.g3_offload on the bundled example (600 GPU blocks, 1,500 host blocks)", () => {
  const small = "{num_host_blocks: 1500}";
  it("a disk tier behind the host tier reads back what the host tier evicted, and reports it", async () => {
    const host = await run(small);
    const disk = await run(small, "--set", `${ROLE}.kv_cache.g3_offload={num_g3_blocks: 20000}`);
    expect(host.r.code).toBe(0);
    expect(disk.r.code).toBe(0);
    expect(host.doc.g3_offload).toBeUndefined();
    const g = disk.doc.g3_offload;
    // Measured: 4 loads read 112 blocks back from disk; the host line counts them too (26 vs 22 loads).
    expect(g).toMatchObject({ scope: "worker_local", tiers: 2, g3_blocks_per_tier: 20000, evictions: 0 });
    expect(g.lookup_hits).toBe(112);
    expect(g.read.submitted_jobs).toBe(4);
    expect(g.read.completed_bytes).toBe(
      (112 * disk.doc.kv_offload.loaded_bytes_per_gpu) / disk.doc.kv_offload.loaded_blocks,
    );
    // A block the host tiers evict is written unless it is on disk already (then refreshed): one
    // job per new block; nothing was evicted from disk, so every write is still there.
    expect(g.write.submitted_jobs).toBeGreaterThan(0);
    expect(g.write.submitted_jobs).toBeLessThanOrEqual(disk.doc.kv_offload.evicted_blocks);
    expect(g.resident_blocks + g.pending_blocks).toBe(g.write.submitted_jobs);
    expect(disk.doc.kv_offload.loads).toBeGreaterThan(host.doc.kv_offload.loads);
    expect(disk.doc.summary.mean_ttft_ms).toBeLessThan(host.doc.summary.mean_ttft_ms);
    expect(disk.r.out).toMatch(
      /KV Disk Offload: 4 reads, [\d.]+ GB per GPU from disk \(112 of [\d,]+ block lookups hit\)/,
    );
  });

  it("cluster-shared storage: one tier, reads of blocks another worker wrote", async () => {
    const shared = await run(
      "{num_host_blocks: 1500}",
      ...setFlags(`${ROLE}.kv_cache.g3_offload={num_g3_blocks: 20000, scope: cluster_shared}`),
    );
    expect(shared.doc.g3_offload).toMatchObject({ scope: "cluster_shared", tiers: 1 });
    expect(shared.doc.g3_offload.cross_worker_read_blocks).toBeGreaterThan(0);
  });
});
