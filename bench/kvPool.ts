/**
 * The KV pool alone (engine/kvBlockPool.ts), on the operations a real replay makes: a replay of a
 * config is run once in this process with every pool call recorded (operation, block, hash,
 * index home), then the log is played back on fresh pools, round after round, and the CPU time
 * of each playback is reported (user + system of this process, docs/performance.md "Method"). The
 * per-block work of prompts is the replay's largest cost and memory-bound; this isolates it from
 * the rest of the replay, so that a change to the pool is measured without the noise of a whole
 * run. Every playback is checked against the recording: the blocks handed out and every answer.
 *
 *   node --import tsx bench/kvPool.ts [--config examples/aggregated.yaml] [--stack dynamo] [--rounds 7]
 *     [--against OTHER/kvBlockPool.ts]
 *
 * `--against` plays the same log on another build of the pool too (a module exporting
 * `KvBlockPool`, e.g. the file at an earlier commit), round by round in turn with this one, and
 * reports both and their ratio: a change to the pool measured against the one before it, on one
 * machine in one process.
 * The config's own engine sizes the pools; a trace path in it is read as the CLI reads it.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/load.js";
import { KvBlockPool } from "../src/engine/kvBlockPool.js";
import { createRoleTimings, simulate } from "../src/pipeline/index.js";
import { openWorkload } from "../src/pipeline/workload.js";

/** Operation codes of the log. */
enum Op {
  New = 0,
  Allocate = 1,
  AllocateInto = 2,
  Register = 3,
  Lookup = 4,
  Acquire = 5,
  Release = 6,
  ReleaseOwnerOnlyRun = 7,
  IsActive = 8,
}

/** A growable log of (op, pool, a, b, c) rows plus a hash per row. */
class OpLog {
  ints = new Int32Array(1 << 20);
  hashes = new Float64Array(1 << 18);
  length = 0;

  push(op: Op, pool: number, a: number, b: number, c: number, hash: number): void {
    if ((this.length + 1) * 5 > this.ints.length) {
      const grown = new Int32Array(this.ints.length * 2);
      grown.set(this.ints);
      this.ints = grown;
    }
    if (this.length >= this.hashes.length) {
      const grown = new Float64Array(this.hashes.length * 2);
      grown.set(this.hashes);
      this.hashes = grown;
    }
    const at = this.length * 5;
    this.ints[at] = op;
    this.ints[at + 1] = pool;
    this.ints[at + 2] = a;
    this.ints[at + 3] = b;
    this.ints[at + 4] = c;
    this.hashes[this.length++] = hash;
  }
}

/** Records every call the replay makes on its pools (their methods wrapped for the recording run only). */
async function record(
  configPath: string,
  sets: string[],
  stack: "dynamo" | "vllm",
): Promise<{ log: OpLog; ids: Int32Array[] }> {
  const spec = loadConfig({ configPath, sets, stack: stack as never });
  const log = new OpLog();
  // Blocks handed out by allocateInto, per call (checked at playback).
  const handed: number[] = [];
  const pools = new Map<KvBlockPool, number>();
  const proto = KvBlockPool.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const wrapped = [
    "allocate",
    "allocateInto",
    "registerAt",
    "lookupAt",
    "acquire",
    "release",
    "isActive",
    "releaseOwnerOnlyRun",
  ];
  const original = Object.fromEntries(wrapped.map((k) => [k, proto[k]]));
  const poolOf = (p: KvBlockPool): number => {
    let id = pools.get(p);
    if (id === undefined) {
      id = pools.size;
      pools.set(p, id);
      log.push(Op.New, id, p.capacity, 0, 0, 0);
    }
    return id;
  };
  // allocateInto calls allocate: only the outer call is a row.
  let inside = false;
  proto.allocate = function (this: KvBlockPool) {
    const b = original.allocate.call(this) as number;
    if (!inside) log.push(Op.Allocate, poolOf(this), b, 0, 0, 0);
    return b;
  };
  proto.allocateInto = function (this: KvBlockPool, ids: unknown, from: unknown, to: unknown) {
    const id = poolOf(this);
    inside = true;
    const end = original.allocateInto.call(this, ids, from, to) as number;
    inside = false;
    const arr = ids as Int32Array;
    // The row's "hash" is where the call started filling.
    log.push(Op.AllocateInto, id, to as number, end, handed.length, from as number);
    for (let k = from as number; k < end; k++) handed.push(arr[k]);
    return end;
  };
  proto.registerAt = function (
    this: KvBlockPool,
    block: unknown,
    hashes: unknown,
    at: unknown,
    home: unknown,
  ) {
    const id = poolOf(this);
    const r = original.registerAt.call(this, block, hashes, at, home) as boolean;
    log.push(
      Op.Register,
      id,
      block as number,
      home as number,
      r ? 1 : 0,
      (hashes as Float64Array)[at as number],
    );
    return r;
  };
  proto.lookupAt = function (this: KvBlockPool, hashes: unknown, at: unknown, home: unknown) {
    const id = poolOf(this);
    const b = original.lookupAt.call(this, hashes, at, home) as number;
    log.push(Op.Lookup, id, b, home as number, 0, (hashes as Float64Array)[at as number]);
    return b;
  };
  proto.acquire = function (this: KvBlockPool, block: unknown) {
    log.push(Op.Acquire, poolOf(this), block as number, 0, 0, 0);
    return original.acquire.call(this, block);
  };
  proto.release = function (this: KvBlockPool, block: unknown) {
    log.push(Op.Release, poolOf(this), block as number, 0, 0, 0);
    return original.release.call(this, block);
  };
  proto.isActive = function (this: KvBlockPool, block: unknown) {
    const r = original.isActive.call(this, block) as boolean;
    log.push(Op.IsActive, poolOf(this), block as number, r ? 1 : 0, 0, 0);
    return r;
  };
  proto.releaseOwnerOnlyRun = function (this: KvBlockPool, ids: unknown, from: unknown, to: unknown) {
    const id = poolOf(this);
    const arr = ids as Int32Array;
    log.push(Op.ReleaseOwnerOnlyRun, id, handed.length, (to as number) - (from as number), 0, 0);
    for (let k = from as number; k < (to as number); k++) handed.push(arr[k]);
    return original.releaseOwnerOnlyRun.call(this, ids, from, to);
  };
  try {
    const timings = await createRoleTimings(spec.engine);
    await simulate(spec, await openWorkload(spec), timings, { capturePerRequest: false });
  } finally {
    for (const [k, f] of Object.entries(original)) proto[k] = f;
  }
  return { log, ids: [Int32Array.from(handed)] };
}

/** The pool class a playback builds (this one, or `--against`'s). */
type PoolClass = new (capacity: number) => KvBlockPool;

/** Plays the log back on fresh pools; returns a checksum, throwing at the first answer that differs. */
function playback(Pool: PoolClass, log: OpLog, handed: Int32Array): number {
  const pools: KvBlockPool[] = [];
  const ints = log.ints;
  const hashes = log.hashes;
  const scratch = new Float64Array(1);
  let ids = new Int32Array(1024);
  let sum = 0;
  for (let i = 0; i < log.length; i++) {
    const at = i * 5;
    const op = ints[at];
    const p = pools[ints[at + 1]];
    const a = ints[at + 2];
    switch (op) {
      case Op.New:
        pools.push(new Pool(a));
        break;
      case Op.Allocate:
        if (p.allocate() !== a) throw new Error(`row ${i}: allocate differs`);
        break;
      case Op.AllocateInto: {
        const to = a;
        const end = ints[at + 3];
        const h = ints[at + 4];
        const from = hashes[i];
        if (ids.length < to) ids = new Int32Array(Math.max(to, 2 * ids.length));
        if (p.allocateInto(ids, from, to) !== end) throw new Error(`row ${i}: allocateInto differs`);
        for (let k = from; k < end; k++)
          if (ids[k] !== handed[h + k - from]) throw new Error(`row ${i}: block differs`);
        sum += end - from;
        break;
      }
      case Op.Register:
        scratch[0] = hashes[i];
        if (p.registerAt(a, scratch, 0, ints[at + 3]) !== (ints[at + 4] === 1))
          throw new Error(`row ${i}: register differs`);
        break;
      case Op.Lookup:
        scratch[0] = hashes[i];
        if (p.lookupAt(scratch, 0, ints[at + 3]) !== a) throw new Error(`row ${i}: lookup differs`);
        break;
      case Op.Acquire:
        p.acquire(a);
        break;
      case Op.Release:
        p.release(a);
        break;
      case Op.IsActive:
        if (p.isActive(a) !== (ints[at + 3] === 1)) throw new Error(`row ${i}: isActive differs`);
        break;
      case Op.ReleaseOwnerOnlyRun:
        p.releaseOwnerOnlyRun(handed, a, a + ints[at + 3]);
        sum += ints[at + 3];
        break;
    }
  }
  for (const p of pools) sum += p.evictions;
  return sum;
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      config: { type: "string", default: "examples/aggregated.yaml" },
      stack: { type: "string", default: "dynamo" },
      rounds: { type: "string", default: "7" },
      set: { type: "string", multiple: true, default: [] },
      against: { type: "string" },
    },
  });
  const t0 = cpuMs();
  const { log, ids } = await record(values.config!, values.set!, values.stack as "dynamo");
  console.log(
    `recorded ${log.length.toLocaleString("en-US")} pool calls in ${(cpuMs() - t0).toFixed(0)} ms CPU`,
  );
  const builds: [string, PoolClass][] = [["this pool", KvBlockPool]];
  if (values.against !== undefined) {
    const other = (await import(resolve(values.against))) as { KvBlockPool: PoolClass };
    builds.push([values.against, other.KvBlockPool]);
  }
  const rounds = Number(values.rounds);
  const times = builds.map((): number[] => []);
  let check = -1;
  for (let r = 0; r < rounds; r++) {
    for (let b = 0; b < builds.length; b++) {
      const start = cpuMs();
      const sum = playback(builds[b][1], log, ids[0]);
      times[b].push(cpuMs() - start);
      if (check >= 0 && sum !== check) throw new Error("playbacks differ");
      check = sum;
    }
  }
  const median = (t: number[]): number => [...t].sort((x, y) => x - y)[t.length >> 1];
  for (let b = 0; b < builds.length; b++) {
    const t = times[b];
    console.log(
      `${builds[b][0]}: playback CPU ms min ${Math.min(...t).toFixed(1)}, median ${median(t).toFixed(1)} over ${rounds} rounds (${t.map((x) => x.toFixed(0)).join(" ")})`,
    );
  }
  if (builds.length === 2) {
    console.log(
      `ratio this / against: min ${(Math.min(...times[0]) / Math.min(...times[1])).toFixed(3)}, median ${(median(times[0]) / median(times[1])).toFixed(3)}`,
    );
  }
}

await main();
