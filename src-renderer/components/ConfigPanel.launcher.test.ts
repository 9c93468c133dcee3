// The config panel's "Where to run" (shown when the capabilities say a launcher can submit): this
// machine or a launcher; the boxes (its field specs) make config.launcher, the contract's errors land
// on their boxes, the GPU picker steps aside, and the choice is remembered with the draft. A launcher
// registered in one line (the toy, @shared/testing/toy-launcher.ts) appears with no other edit.
import { flushPromises, mount, type VueWrapper } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { CAPABILITIES } from '@shared/testing/fixtures'
import { toyLauncher } from '@shared/testing/toy-launcher'
import { registerLauncher } from '@shared/contract/launcher'
import { setBridge } from '../bridge'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useConfigStore } from '../stores/config'
import { STORAGE_KEY } from '../stores/draft/persistence'
import ConfigPanel from './ConfigPanel.vue'

const SLURM_ON = { slurm: { available: true, detail: 'slurm 22.05.8' } }
const GPUS = [0, 1].map((index) => ({ index, uuid: `GPU-${index}`, name: 'NVIDIA H200', memoryMiB: 143771 }))
let service: FakeService

async function panel(capabilities: Partial<typeof CAPABILITIES> = { launchers: SLURM_ON }): Promise<VueWrapper> {
  service = new FakeService({ capabilities })
  setBridge(fakeBridge(service))
  await useCapabilitiesStore().load()
  const w = mount(ConfigPanel)
  await flushPromises()
  return w
}
const errorsOf = (w: VueWrapper, field: string, engine = 'slurm') => w.findAll(`#err-${engine}-${field} li`).map((e) => e.text())

beforeEach(() => {
  localStorage.clear()
  setActivePinia(createPinia())
})
afterEach(() => setBridge(null))

describe('ConfigPanel: where to run', () => {
  it('is not shown where Slurm cannot submit', async () => {
    const w = await panel({})
    expect(w.find('[data-test=where-to-run]').exists()).toBe(false)
  })

  it("runs on this machine by default; Slurm's boxes make config.launcher and the run sends it", async () => {
    const w = await panel()
    expect(w.get<HTMLInputElement>('[data-test=place-local]').element.checked).toBe(true)
    expect(w.find('[data-test=slurm-fields]').exists()).toBe(false)
    expect(w.get('[data-test=slurm-detail]').text()).toBe('slurm 22.05.8')
    await w.get('[data-test=place-slurm]').setValue(true)
    expect(w.get<HTMLInputElement>('[data-test=slurm-gres]').element.value).toBe('gpu:1')
    expect(w.get<HTMLInputElement>('[data-test=slurm-queueTimeoutS]').element.value).toBe('600')
    expect(w.get('[data-test=estimate-slurm]').text()).toContain('one job array per pool')
    await w.get('[data-test=slurm-partition]').setValue('gpu')
    await w.get('[data-test=slurm-gres]').setValue('')
    await w.get('[data-test=slurm-time]').setValue('1:00:00')
    await w.get('[data-test=slurm-account]').setValue('mylab')
    await w.get('[data-test=slurm-sbatchArgs]').setValue(' --qos=short  --mail-type=END,FAIL ')
    await w.get('[data-test=slurm-queueTimeoutS]').setValue('120')
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')[0].config).toMatchObject({
      launcher: {
        engine: 'slurm',
        partition: 'gpu',
        gres: null,
        time: '1:00:00',
        account: 'mylab',
        sbatchArgs: ['--qos=short', '--mail-type=END,FAIL'],
        queueTimeoutS: 120,
      },
    })
  })

  it('empty optional boxes are left out, and this machine again drops the launcher', async () => {
    const w = await panel()
    const cfg = useConfigStore()
    await w.get('[data-test=place-slurm]').setValue(true)
    expect(cfg.config?.launcher).toEqual({ engine: 'slurm', gres: 'gpu:1', sbatchArgs: [], queueTimeoutS: 600 })
    await w.get('[data-test=place-local]').setValue(true)
    expect(cfg.config).not.toHaveProperty('launcher')
  })

  it("says the contract's errors on their boxes, by field, and Run waits", async () => {
    const w = await panel()
    await w.get('[data-test=place-slurm]').setValue(true)
    await w.get('[data-test=slurm-partition]').setValue('gpu a100')
    await w.get('[data-test=slurm-time]').setValue('soon')
    await w.get('[data-test=slurm-sbatchArgs]').setValue('--qos=short --array=0-3')
    await w.get('[data-test=slurm-queueTimeoutS]').setValue('10m')
    expect(errorsOf(w, 'partition')).toEqual(['Partition accepts a Slurm value such as gpu (letters, digits and _ . : , = + @ % - /) (you typed "gpu a100")'])
    expect(errorsOf(w, 'time')).toEqual(['Time limit accepts a Slurm time limit such as 30, 1:00:00 or 1-12 (you typed "soon")'])
    expect(errorsOf(w, 'queueTimeoutS')).toEqual(['Queue timeout (s): "10m" is not a number; enter whole seconds from 5 to 604800 (a week)'])
    expect(errorsOf(w, 'gres')).toEqual([])
    expect(w.get('[data-test=slurm-partition]').attributes('aria-invalid')).toBe('true')
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
    await w.get('[data-test=slurm-queueTimeoutS]').setValue('2')
    expect(errorsOf(w, 'queueTimeoutS')).toEqual(['Queue timeout (s) must be an integer from 5 to 604800 (you typed "2")'])
    // the contract's cross-field checks (an option Trainpool sets itself) once the boxes are valid
    await w.get('[data-test=slurm-partition]').setValue('gpu')
    await w.get('[data-test=slurm-time]').setValue('30')
    await w.get('[data-test=slurm-queueTimeoutS]').setValue('60')
    expect(errorsOf(w, 'sbatchArgs')).toEqual([
      'Other sbatch options: --array is set by Trainpool itself (its own field or the job array); accepted: other sbatch options such as --qos=short (you typed "--array=0-3")',
    ])
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
    await w.get('[data-test=slurm-sbatchArgs]').setValue('--qos=short')
    expect(useConfigStore().valid).toBe(true)
  })

  it('sets the GPU picker aside on Slurm (and says why), and brings the choice back on this machine', async () => {
    const w = await panel({ launchers: SLURM_ON, gpus: GPUS })
    const cfg = useConfigStore()
    await w.get('[data-test=gpus-pin]').setValue(true)
    expect(cfg.draft.gpus).toBe('all')
    await w.get('[data-test=place-slurm]').setValue(true)
    expect(w.get('[data-test=gpu-picker]').attributes('disabled')).toBeDefined()
    expect(w.get('[data-test=gpus-slurm-note]').text()).toContain('each task gets its GPU from Slurm')
    expect(w.find('[data-test=gpus-pin]').exists()).toBe(false)
    expect(cfg.draft.gpus).toBeUndefined()
    expect(cfg.valid).toBe(true)
    await w.get('[data-test=place-local]').setValue(true)
    expect(cfg.draft.gpus).toBe('all')
    expect(w.get('[data-test=gpu-picker]').attributes('disabled')).toBeUndefined()
  })

  it('is remembered with the draft; a draft saved before the launcher existed loads on this machine', async () => {
    const w = await panel()
    await w.get('[data-test=place-slurm]').setValue(true)
    await w.get('[data-test=slurm-partition]').setValue('gpu')
    await flushPromises()
    expect(JSON.parse(localStorage.getItem(STORAGE_KEY)!).launcher).toMatchObject({ engine: 'slurm', partition: 'gpu' })
    setActivePinia(createPinia())
    const again = await panel()
    expect(again.get<HTMLInputElement>('[data-test=place-slurm]').element.checked).toBe(true)
    expect(again.get<HTMLInputElement>('[data-test=slurm-partition]').element.value).toBe('gpu')

    localStorage.setItem(STORAGE_KEY, JSON.stringify(presetConfig('smoke')))
    setActivePinia(createPinia())
    const old = await panel()
    expect(old.get<HTMLInputElement>('[data-test=place-local]').element.checked).toBe(true)
  })

  it('a draft on Slurm where Slurm is not available says so on the section, and can go back', async () => {
    localStorage.setItem(STORAGE_KEY, JSON.stringify({ ...presetConfig('smoke'), launcher: { engine: 'slurm' } }))
    const w = await panel({})
    expect(w.find('[data-test=where-to-run]').exists()).toBe(true)
    expect(w.findAll('#err-launcher li').map((e) => e.text())).toEqual([
      'Where to run: Slurm is not available here: sbatch --version failed: not found on PATH',
    ])
    await w.get('[data-test=place-local]').setValue(true)
    expect(w.find('[data-test=where-to-run]').exists()).toBe(false)
    expect(useConfigStore().valid).toBe(true)
  })

  it('a preset keeps where to run; Reset goes back to this machine', async () => {
    const w = await panel()
    const cfg = useConfigStore()
    await w.get('[data-test=place-slurm]').setValue(true)
    await w.get('[data-test=slurm-partition]').setValue('gpu')
    await w.get('[data-test=preset]').setValue('quick')
    expect(cfg.draft.launcher).toMatchObject({ partition: 'gpu' })
    expect(cfg.shownPreset).toBe('quick')
    await w.get('[data-test=reset]').trigger('click')
    expect(cfg.draft.launcher).toBeUndefined()
    expect(w.get<HTMLInputElement>('[data-test=place-local]').element.checked).toBe(true)
  })

  it('a launcher registered in one line (the toy) appears with its own radio, boxes and words; its errors land on its box', async () => {
    const unregister = registerLauncher(toyLauncher)
    try {
      const w = await panel({ launchers: { ...SLURM_ON, toy: { available: true, detail: 'toy 1.0' } } })
      expect(w.get('[data-test=toy-detail]').text()).toBe('toy 1.0')
      await w.get('[data-test=place-toy]').setValue(true)
      expect(
        w
          .get('[data-test=toy-fields]')
          .findAll('label')
          .map((l) => l.text()),
      ).toEqual(['Toy lane', 'Queue timeout (s)'])
      expect(w.get('[data-test=toy-summary]').text()).toBe('Each worker is a toy task that dials back to this app.')
      expect(w.get('[data-test=estimate-toy]').text()).toBe('on Toy: toy tasks, their queue wait not counted')
      await w.get('[data-test=toy-lane]').setValue('Blue')
      expect(errorsOf(w, 'lane', 'toy')).toEqual(['Toy lane accepts a lane name in lowercase letters, such as blue (you typed "Blue")'])
      await w.get('[data-test=toy-lane]').setValue('blue')
      await w.get('[data-test=run]').trigger('submit')
      await flushPromises()
      expect(service.callsTo('start')[0].config.launcher).toEqual({ engine: 'toy', lane: 'blue', queueTimeoutS: 600 })
      // where it cannot submit it is not offered
      setActivePinia(createPinia())
      localStorage.clear()
      const elsewhere = await panel({ launchers: { ...SLURM_ON, toy: { available: false, detail: 'no toy here' } } })
      expect(elsewhere.find('[data-test=place-toy]').exists()).toBe(false)
    } finally {
      unregister()
    }
  })
})
