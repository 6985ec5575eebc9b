import type { GpuSpec } from "../hardware/gpu.js";
import type { ModelArchitecture } from "../model/architecture.js";

/**
 * Forward-pass timing provider of one worker role (aisimulate.md §4.1, mocker.md §2). Defined here,
 * beside the models it selects, so that timing/ does not depend on config/ (RunSpec uses it).
 */
export type TimingSpec =
  | { readonly type: "polynomial" }
  | { readonly type: "fixed"; readonly prefillMs: number; readonly decodeMs: number }
  | {
      /** Op-level model over silicon-measured op tables (aisimulate.md §4.2). */
      readonly type: "default";
      readonly model: ModelArchitecture;
      readonly gpu: GpuSpec;
      /** An AIConfigurator-format perf-data tree to read instead of the built-in tables. */
      readonly perfDatabase: string | null;
      /** `timing.host_overhead`: null fields take the defaults of `timing/hostOverhead.ts`. */
      readonly hostOverhead: { readonly perPassMs: number | null; readonly perSequenceMs: number | null };
    };

/** What a timing model needs of its worker role: the parallel layout and the scheduling mode. */
export interface TimedRole {
  readonly tensor: number;
  readonly pipeline: number;
  readonly attentionData: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
  /** vLLM `--async-scheduling` hides the host overhead behind the previous pass. */
  readonly asyncScheduling: boolean;
}
