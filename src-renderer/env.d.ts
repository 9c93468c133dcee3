/// <reference types="vite/client" />
import type { TrainpoolApi } from '@shared/contract/api'

declare global {
  interface Window {
    /** exposed by the preload script (Electron); absent in browser mode */
    trainpool?: TrainpoolApi
  }
}

export {}
