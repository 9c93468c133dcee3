import { vi } from 'vitest'
import type { RunEvent } from '@shared/contract'
import type { BenchServiceApi } from '../../service/types'

export interface FakeService extends BenchServiceApi {
  emit(event: RunEvent): void
  listenerCount(): number
}

export function fakeService(): FakeService & { [K in keyof BenchServiceApi]: ReturnType<typeof vi.fn> & BenchServiceApi[K] } {
  const listeners = new Set<(e: RunEvent) => void>()
  const service = {
    capabilities: vi.fn(async () => ({ shell: 'electron' }) as never),
    start: vi.fn(async (_raw: unknown) => ({ runId: 'run-1' })),
    cancel: vi.fn(async (_runId?: string) => ({ cancelled: true })),
    listRuns: vi.fn(async () => []),
    getRun: vi.fn(async (_runId: string) => ({ runId: 'run-1' }) as never),
    currentRun: vi.fn(async () => null),
    renameRun: vi.fn(async (runId: string, name: string) => ({ runId, name }) as never),
    tagRun: vi.fn(async (runId: string, tags: string[]) => ({ runId, tags }) as never),
    deleteRun: vi.fn(async (_runId: string) => ({ deleted: true as const })),
    exportRun: vi.fn(async (runId: string, format: string) => ({ fileName: `trainpool-${runId}.${format}`, mimeType: 'text/plain', content: 'x' })),
    reportPdf: vi.fn(async (runId: string) => ({ fileName: `trainpool-${runId}.pdf`, sizeBytes: 4, base64: 'JVBERg==' })),
    onEvent: vi.fn((l: (e: RunEvent) => void) => {
      listeners.add(l)
      return () => listeners.delete(l)
    }),
    shutdown: vi.fn(async () => {}),
    emit: (e: RunEvent) => listeners.forEach((l) => l(e)),
    listenerCount: () => listeners.size,
  }
  return service as never
}
