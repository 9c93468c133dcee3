// Electron main-process entry (built to out/main/index.js, package.json "main").
import { app } from 'electron'
import { runApp } from './app'
import { createBenchService } from './service-factory'

runApp({ createService: createBenchService, mainDir: __dirname }).catch((err: unknown) => {
  console.error('trainpool: the app could not start:', err)
  app.exit(1)
})
