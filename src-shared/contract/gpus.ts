// Which GPUs a run's workers use: the machine's NVIDIA GPUs (as nvidia-smi lists them), the user's
// choice (`gpus`: all, none, or indices) and the placement it makes — worker w on the chosen GPU
// w mod k, pinned by its own CUDA_VISIBLE_DEVICES (a UUID; '' hides every GPU). WebGPU cannot choose
// among identical GPUs (Vulkan ignores CUDA_VISIBLE_DEVICES; research/scale-out.md §1.2), so a spread
// of webgpu workers over several identical GPUs is refused rather than pretended.
import { z } from 'zod'

export const GpuInfoSchema = z.object({ index: z.number().int().min(0), uuid: z.string(), name: z.string(), memoryMiB: z.number().min(0) })
export type GpuInfo = z.infer<typeof GpuInfoSchema>

/** all: every GPU nvidia-smi lists; none: workers see no GPU; indices: those GPUs. Absent: no pinning (today's behaviour). */
export const GpuChoiceSchema = z.union([z.literal('all'), z.literal('none'), z.array(z.number().int().min(0)).min(1).max(64)], {
  error: 'gpus accepts all, none, or a list of GPU indices (0, 2)',
})
export type GpuChoice = z.infer<typeof GpuChoiceSchema>

/** The GPUs a choice names, or a refusal in words. */
export function chosenGpus(choice: GpuChoice, gpus: readonly GpuInfo[]): { gpus: GpuInfo[] } | { refusal: string } {
  if (choice === 'none') return { gpus: [] }
  if (choice === 'all') {
    return gpus.length ? { gpus: [...gpus] } : { refusal: 'gpus all: this machine has no NVIDIA GPU (nvidia-smi lists none); accepted: none' }
  }
  const missing = choice.filter((i) => !gpus.some((g) => g.index === i))
  if (missing.length) {
    const have = gpus.length ? gpus.map((g) => g.index).join(', ') : 'none (nvidia-smi lists no GPU)'
    return { refusal: `gpus ${choice.join(',')}: no GPU ${missing.join(', ')} on this machine; its GPUs: ${have}` }
  }
  if (new Set(choice).size !== choice.length) return { refusal: `gpus ${choice.join(',')} lists a GPU twice` }
  return { gpus: choice.map((i) => gpus.find((g) => g.index === i)!) }
}

/** Worker w's CUDA_VISIBLE_DEVICES: the chosen GPUs round-robin ('' for none: every GPU hidden). */
export function visibleDevicesFor(chosen: readonly GpuInfo[], worker: number): string {
  return chosen.length ? chosen[worker % chosen.length].uuid : ''
}

/** Why webgpu workers cannot be spread over these GPUs, or null (one GPU, or none). */
export function webgpuSpreadRefusal(chosen: readonly GpuInfo[]): string | null {
  if (chosen.length < 2) return null
  const list = chosen.map((g) => `${g.index}: ${g.name}`).join('; ')
  const identical = new Set(chosen.map((g) => g.name)).size < chosen.length
  return identical
    ? `webgpu cannot choose among identical GPUs (${list}): Vulkan ignores CUDA_VISIBLE_DEVICES and WebGPU cannot pick an adapter by index, so every worker would land on the same one; choose one GPU (gpus 0) or a CUDA backend (tensorflow, xgboost)`
    : `webgpu workers are not pinned to GPUs (${list}): Vulkan ignores CUDA_VISIBLE_DEVICES; choose one GPU (gpus 0) or a CUDA backend (tensorflow, xgboost)`
}

/** W workers with at most `perGpu` on each of `gpus` GPUs, or why not. */
export function workersPerGpuRefusal(workers: readonly number[], perGpu: number, gpus: number): string | null {
  const most = perGpu * Math.max(gpus, 1)
  const over = workers.filter((w) => w > most)
  return over.length
    ? `workers ${over.join(', ')} would put more than ${perGpu} worker${perGpu === 1 ? '' : 's'} on a GPU: workersPerGpu ${perGpu} allows at most ${most} on ${gpus} GPU${gpus === 1 ? '' : 's'}`
    : null
}
