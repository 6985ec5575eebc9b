/** Public surface of the model layer: resolution, catalog, dtype rules and memory accounting. */
export type { KvDtype, WeightDtype } from "../hardware/dtypes.js";
export type { MlaSpec, ModelArchitecture, MoeSpec } from "./architecture.js";
export { catalogIds, lookupCatalog } from "./catalog.js";
export { ModelError } from "./errors.js";
export { architectureFromHfConfig, SUPPORTED_ARCHITECTURES } from "./hfConfig.js";
export {
  activationBytes,
  defaultKvCapacityBlocks,
  type KvCapacity,
  type KvCapacityBreakdown,
  type KvCapacityInput,
  kvBytesPerToken,
  ncclBytes,
  weightBreakdown,
  weightBytesPerGpu,
} from "./memory.js";
export { checkpointDtypes } from "./quant.js";
export { hfHubCacheDir, maxContextLength, type ResolveModelOptions, resolveModel } from "./resolve.js";
