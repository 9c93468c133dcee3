// The worker's side of the channel: Electron's utility process (process.parentPort) or a Node
// child_process with an IPC channel (process.send). Same messages either way.
import type { ToWorker } from '@shared/contract'
import type { WorkerChannel } from './loop'

export type ParentChannel = Omit<WorkerChannel, 'exit'>

interface ElectronParentPort {
  postMessage(message: unknown): void
  on(event: 'message', listener: (e: { data: unknown }) => void): void
}

export function connectToParent(): ParentChannel {
  const parentPort = (process as unknown as { parentPort?: ElectronParentPort }).parentPort
  if (parentPort) {
    return {
      post: (m) => parentPort.postMessage(m),
      onMessage: (l) => parentPort.on('message', (e) => l(e.data as ToWorker)),
      // Electron ends utility processes with their parent; nothing to watch
      onParentGone: () => {},
    }
  }
  if (typeof process.send !== 'function') {
    throw new Error('trainpool worker: started without an IPC channel (run it through the worker pool)')
  }
  return {
    post: (m) => {
      if (process.connected) process.send!(m)
    },
    onMessage: (l) => process.on('message', (m) => l(m as ToWorker)),
    onParentGone: (l) => process.on('disconnect', l),
  }
}
