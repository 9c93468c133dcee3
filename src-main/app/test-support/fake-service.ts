import { vi } from 'vitest'
import type { ParsedRequest, RunEvent } from '@shared/contract'
import type { BenchServiceApi } from '../../service/types'

export interface FakeService extends BenchServiceApi {
  emit(event: RunEvent): void
  listenerCount(): number
}

export function fakeService(): FakeService & { [K in keyof BenchServiceApi]: ReturnType<typeof vi.fn> & BenchServiceApi[K] } {
  const listeners = new Set<(e: RunEvent) => void>()
  const service = {
    capabilities: vi.fn(async () => ({ shell: 'electron' }) as never),
    start: vi.fn(async (_request: ParsedRequest<'start'>) => ({ runId: 'run-1' })),
    cancel: vi.fn(async (_request: ParsedRequest<'cancel'>) => ({ cancelled: true })),
    listRuns: vi.fn(async () => []),
    getRun: vi.fn(async (_request: ParsedRequest<'getRun'>) => ({ runId: 'run-1' }) as never),
    currentRun: vi.fn(async () => null),
    renameRun: vi.fn(async ({ runId, name }: ParsedRequest<'renameRun'>) => ({ runId, name }) as never),
    tagRun: vi.fn(async ({ runId, tags }: ParsedRequest<'tagRun'>) => ({ runId, tags }) as never),
    deleteRun: vi.fn(async (_request: ParsedRequest<'deleteRun'>) => ({ deleted: true as const })),
    exportRun: vi.fn(async ({ runId, format }: ParsedRequest<'exportRun'>) => ({ fileName: `trainpool-${runId}.${format}`, mimeType: 'text/plain', content: 'x' })),
    reportPdf: vi.fn(async ({ runId }: ParsedRequest<'reportPdf'>) => ({ fileName: `trainpool-${runId}.pdf`, sizeBytes: 4, base64: 'JVBERg==' })),
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
