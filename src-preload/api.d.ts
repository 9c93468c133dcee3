// Type-only: what the preload puts on the page (the renderer's tsconfig includes this file).
import type { TrainpoolApi } from '@shared/contract/api'

declare global {
  interface Window {
    /** present in the Electron app (preload); absent in browser mode */
    trainpool?: TrainpoolApi
  }
}

export {}
