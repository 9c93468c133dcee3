// Entry of report.html: the printable benchmark report (no Pinia, no bridge; data is injected).
import { createApp, nextTick } from 'vue'
import ReportApp from './ReportApp.vue'
import { signalError, signalReady, waitForRun } from './load'
import './report.css'

waitForRun()
  .then(async (run) => {
    document.title = `Trainpool report — ${run.name ?? run.runId}`
    createApp(ReportApp, { run }).mount('#report')
    await nextTick()
    await signalReady()
  })
  .catch((err: unknown) => {
    const message = err instanceof Error ? err.message : String(err)
    const el = document.getElementById('report')
    if (el) el.textContent = `This report could not be drawn: ${message}`
    signalError(message)
  })
