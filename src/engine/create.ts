import type { TimingModel } from "../timing/timingModel.js";
import type { EngineConfig, SglangSpec } from "./engineConfig.js";
import { SglangEngine } from "./sglangEngine.js";
import { VllmEngine } from "./vllmEngine.js";
import type { AdmissionObserver, WorkerEngine } from "./workerEngine.js";

/**
 * The scheduler core of one attention-DP rank for its role's backend (docs/backends.md): SGLang's
 * when the role has SGLang settings, otherwise vLLM's, which TRT-LLM runs on too (its capacity
 * scheduler is `config.capacityPolicy`). The one place outside the backends that names them.
 */
export function createEngine(
  config: EngineConfig,
  sglang: SglangSpec | undefined,
  timing: TimingModel,
  observer: AdmissionObserver,
): WorkerEngine {
  return sglang === undefined
    ? new VllmEngine(config, timing, observer)
    : new SglangEngine({ ...config, sglang }, timing, observer);
}
