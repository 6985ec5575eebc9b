/**
 * Decode-run merging prices a run's plain decode passes in one call (`TimingModel.decodeRunMs`):
 * every duration must be the double `passMs` gives that pass, for the op-level model (dense and
 * MLA, with host overhead and CUDA-graph padding), through `SplitPassTiming`, and for models
 * without the method (`decodeRunMs` asks them pass by pass).
 */
import { describe, expect, it } from "vitest";
import { gpuSpec } from "../../src/hardware/catalog.js";
import { loadCompactTables } from "../../src/hardware/compactTables.js";
import { resolveModel } from "../../src/model/resolve.js";
import { CudaGraphPadding } from "../../src/timing/cudaGraphs.js";
import { OpLevelTiming } from "../../src/timing/opLevel.js";
import { PassShape } from "../../src/timing/passShape.js";
import { PolynomialTiming } from "../../src/timing/polynomial.js";
import { SplitPassTiming } from "../../src/timing/splitPasses.js";
import { decodeRunMs, type TimingModel } from "../../src/timing/timingModel.js";

const PAR = { tensor: 1, pipeline: 1, attentionData: 1, moeTensor: 1, moeExpert: 1 };

function opLevel(model: string, gpu: string, tensor = 1): OpLevelTiming {
  return new OpLevelTiming(
    resolveModel(model),
    gpuSpec(gpu),
    loadCompactTables(gpu),
    { ...PAR, tensor, moeTensor: tensor },
    { perPassMs: 0.126, perSequenceMs: 0.0093 },
    null,
    {},
    CudaGraphPadding.vllmDefault(256, 8192),
  );
}

/** `passMs` of each pass of the run, as the engine priced them one by one. */
function oneByOne(t: TimingModel, batch: number, firstKv: number, totalKv: number, count: number): number[] {
  const shape = new PassShape().setPrefill(0, 0, 0).setDrafts(0, 0);
  const out: number[] = [];
  for (let j = 0, kv = firstKv; j < count; j++, kv += batch)
    out.push(t.passMs(shape.setDecode(batch, kv, kv / batch, totalKv)));
  return out;
}

describe("a decode run's pass prices in one call", () => {
  const models: [string, TimingModel][] = [
    ["Llama-3.1-8B on H100", opLevel("meta-llama/Llama-3.1-8B", "h100_sxm")],
    ["Qwen3-32B on H200", opLevel("Qwen/Qwen3-32B", "h200_sxm")],
    ["DeepSeek-V3 (MLA) on 8× H200", opLevel("deepseek-ai/DeepSeek-V3", "h200_sxm", 8)],
    ["split passes over Llama-3.1-8B", new SplitPassTiming(opLevel("meta-llama/Llama-3.1-8B", "h100_sxm"))],
    ["polynomial (no such method: pass by pass)", new PolynomialTiming()],
  ];
  for (const [name, t] of models) {
    it(`${name}: the same doubles as passMs pass by pass`, () => {
      const out = new Float64Array(64);
      const totalKv = 1 << 21;
      for (const batch of [1, 3, 7, 32, 129, 256]) {
        // First contexts on and between table knots, fractional means, long runs of one batch.
        for (const firstKv of [
          batch,
          batch * 100 + 1,
          batch * 1023 + Math.floor(batch / 2),
          batch * 8191 + 3,
        ]) {
          decodeRunMs(t, batch, firstKv, totalKv, 64, out, new PassShape());
          const want = oneByOne(t, batch, firstKv, totalKv, 64);
          for (let j = 0; j < 64; j++)
            expect(Object.is(out[j], want[j]), `batch ${batch}, pass ${j}`).toBe(true);
        }
      }
    });
  }
});
