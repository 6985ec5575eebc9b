/**
 * `parallelism: {preset: default}` (`ai-dynamo/aisimulate@ea68be2:python/aisimulate/src/aisimulate/recommend.py`): worker shapes on the GPU ladder 1, 2, 4, 8,
 * 16 with pipeline 1 — attention split by tensor parallelism or (aggregated workers) attention-DP
 * ranks, MoE experts split by expert or tensor parallelism — that the model's width admits; the
 * caller drops those whose weights or KV cache do not fit. The optimizer searches a latent space
 * (GPUs per worker on a log scale, the attention and FFN modes, the share of the GPU budget used,
 * and for P/D the prefill share of it), and each suggestion snaps to the nearest legal shape:
 * fewest categorical mismatches, then the closest GPU count in log2, then ladder order.
 */
import type { ModelArchitecture } from "../model/architecture.js";
import type { WorkerRole } from "../util/workerRole.js";
import type { Assignment, Dimension } from "./space.js";

export const GPU_LADDER = [1, 2, 4, 8, 16] as const;

export interface WorkerShape {
  readonly gpus: number;
  readonly tensor: number;
  readonly attentionData: number;
  readonly moeTensor: number;
  readonly moeExpert: number;
  readonly attentionMode: "tp" | "dp";
  /** null for a dense model. */
  readonly ffnMode: "ep" | "tp" | null;
}

/** The parallelism mapping of a shape with `replicas` workers. */
export function shapeMapping(shape: WorkerShape, replicas: number): Record<string, number> {
  return {
    replicas,
    tensor: shape.tensor,
    pipeline: 1,
    attention_data: shape.attentionData,
    moe_tensor: shape.moeTensor,
    moe_expert: shape.moeExpert,
  };
}

/**
 * Shapes on the ladder up to `maxGpus`, before the capacity check. `arch` null (a model fleetsim
 * cannot resolve; polynomial or fixed timing) admits every tensor split. P/D roles run one
 * attention-DP rank (config/schema/role.ts).
 */
export function ladderShapes(
  role: WorkerRole,
  arch: ModelArchitecture | null,
  maxGpus: number,
): WorkerShape[] {
  const out: WorkerShape[] = [];
  for (const gpus of GPU_LADDER) {
    if (gpus > maxGpus) break;
    const attention: ("tp" | "dp")[] = gpus === 1 || role !== "aggregated" ? ["tp"] : ["tp", "dp"];
    for (const attentionMode of attention) {
      const tensor = attentionMode === "tp" ? gpus : 1;
      const attentionData = gpus / tensor;
      if (arch !== null && (arch.numHeads % tensor !== 0 || tensor > arch.numHeads)) continue;
      const ffn: ("ep" | "tp" | null)[] = arch?.moe ? (gpus === 1 ? ["tp"] : ["ep", "tp"]) : [null];
      for (const ffnMode of ffn) {
        const moeExpert = ffnMode === "ep" ? gpus : 1;
        const moeTensor = ffnMode === "tp" && gpus > 1 ? gpus : 1;
        if (arch?.moe && arch.moe.numExperts % moeExpert !== 0) continue;
        out.push({ gpus, tensor, attentionData, moeTensor, moeExpert, attentionMode, ffnMode });
      }
    }
  }
  return out;
}

/** Names of the latent dimensions of a role searched with the default preset. */
export function latentNames(role: WorkerRole) {
  const base = `engine.workers.${role}.parallelism`;
  return {
    gpus: `${base}.gpus_per_worker`,
    attention: `${base}.attention_mode`,
    ffn: `${base}.ffn_mode`,
  };
}

export const USED_GPU_RATIO = "used_gpu_ratio";
export const PREFILL_GPU_SHARE = "prefill_gpu_share";

/** The latent dimensions of one role's legal shapes. */
export function roleDimensions(role: WorkerRole, shapes: readonly WorkerShape[]): Dimension[] {
  const names = latentNames(role);
  const gpus = shapes.map((s) => s.gpus);
  const dims: Dimension[] = [
    {
      kind: "numeric",
      name: names.gpus,
      min: Math.min(...gpus),
      max: Math.max(...gpus),
      log: true,
      integer: true,
      step: null,
    },
  ];
  const attention = [...new Set(shapes.map((s) => s.attentionMode))];
  if (attention.length > 1) dims.push({ kind: "categorical", name: names.attention, values: attention });
  const ffn = [...new Set(shapes.map((s) => s.ffnMode).filter((m) => m !== null))];
  if (ffn.length > 1) dims.push({ kind: "categorical", name: names.ffn, values: ffn });
  return dims;
}

/** The budget dimensions of a study whose roles include `defaultRoles` default-preset roles. */
export function budgetDimensions(defaultRoles: number): Dimension[] {
  if (defaultRoles === 0) return [];
  const ratio: Dimension = {
    kind: "numeric",
    name: USED_GPU_RATIO,
    min: 0,
    max: 1,
    log: false,
    integer: false,
    step: null,
  };
  if (defaultRoles < 2) return [ratio];
  return [
    ratio,
    { kind: "numeric", name: PREFILL_GPU_SHARE, min: 0, max: 1, log: false, integer: false, step: null },
  ];
}

/** The legal shape nearest the suggestion for `role`. */
export function snapShape(role: WorkerRole, shapes: readonly WorkerShape[], a: Assignment): WorkerShape {
  const names = latentNames(role);
  const gpus = Number(a[names.gpus] ?? shapes[0].gpus);
  const attention = a[names.attention];
  const ffn = a[names.ffn];
  let best = shapes[0];
  let bestKey = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  for (const s of shapes) {
    const mismatches =
      (attention !== undefined && s.attentionMode !== attention ? 1 : 0) +
      (ffn !== undefined && s.ffnMode !== ffn ? 1 : 0);
    const distance = Math.abs(Math.log2(s.gpus) - Math.log2(gpus));
    if (mismatches < bestKey[0] || (mismatches === bestKey[0] && distance < bestKey[1] - 1e-12)) {
      best = s;
      bestKey = [mismatches, distance];
    }
  }
  return best;
}

/**
 * Replicas of the default-preset roles: `used_gpu_ratio` of the GPUs the budget leaves after the
 * concrete roles, split between prefill and decode by `prefill_gpu_share`; each role has at least
 * one worker, and the total is brought within `max` by removing workers from the larger role.
 */
export function assignReplicas(
  roles: readonly { readonly role: WorkerRole; readonly gpus: number }[],
  left: number,
  min: number,
  a: Assignment,
): Map<WorkerRole, number> {
  const ratio = Number(a[USED_GPU_RATIO] ?? 1);
  const out = new Map<WorkerRole, number>();
  if (roles.length === 1) {
    const { role, gpus } = roles[0];
    const most = Math.max(1, Math.floor(left / gpus));
    let replicas = Math.min(most, Math.max(1, Math.round((ratio * left) / gpus)));
    if (replicas * gpus < min) replicas = Math.min(most, Math.ceil(min / gpus));
    out.set(role, replicas);
    return out;
  }
  const share = Number(a[PREFILL_GPU_SHARE] ?? 0.5);
  const total = Math.max(
    roles.reduce((s, r) => s + r.gpus, 0),
    ratio * left,
  );
  const counts = roles.map((r, i) =>
    Math.max(1, Math.round(((i === 0 ? share : 1 - share) * total) / r.gpus)),
  );
  const used = (): number => roles.reduce((s, r, i) => s + counts[i] * r.gpus, 0);
  while (used() > left) {
    let j = -1;
    for (let i = 0; i < roles.length; i++) {
      if (counts[i] > 1 && (j < 0 || counts[i] * roles[i].gpus > counts[j] * roles[j].gpus)) j = i;
    }
    if (j < 0) break;
    counts[j]--;
  }
  for (const [i, r] of roles.entries()) out.set(r.role, counts[i]);
  return out;
}
