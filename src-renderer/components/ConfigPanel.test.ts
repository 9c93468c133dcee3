import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { PRESETS, presetConfig } from '@shared/contract/config'
import { estimateRunPeakBytes } from '@shared/estimate'
import { allFamilies, mlpFamily, type ModelFamily, registerFamily } from '@shared/families'
import { formatBytes } from '@shared/format'
import { expandPlan } from '@shared/plan'
import { setBridge } from '../bridge'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useConfigStore } from '../stores/config'
import { useRunStore } from '../stores/run'
import { TrainpoolError } from '@shared/vocabulary/errors'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { toyFamily } from '@shared/testing/fixtures'
import ConfigPanel from './ConfigPanel.vue'

let service: FakeService

function setup() {
  const pinia = createPinia()
  setActivePinia(pinia)
  return mount(ConfigPanel, { global: { plugins: [pinia] } })
}

beforeEach(() => {
  localStorage.clear()
  service = new FakeService()
  setBridge(fakeBridge(service))
})
afterEach(() => setBridge(null))

describe('ConfigPanel validation', () => {
  it('starts valid with Run enabled and an estimate', () => {
    const w = setup()
    expect(w.get('[data-test=run]').attributes('disabled')).toBeUndefined()
    expect(w.get('[data-test=estimate]').text()).toMatch(/Rough estimate/)
    expect(w.find('.field-error').exists()).toBe(false)
  })

  it("renders the MLP's fields from its field specs: label, help, current value", () => {
    const w = setup()
    const fields = w.findAll('[data-test=model-fields] [data-test^=model-field-]')
    expect(fields.map((f) => f.find('label').text())).toEqual(mlpFamily.fields.map((f) => f.label))
    expect((w.get('[data-test=model-hidden]').element as HTMLInputElement).value).toBe('64')
    expect((w.get('[data-test=model-lr]').element as HTMLInputElement).value).toBe('0.01')
    expect(w.get('[data-test=model-field-batchSize]').text()).toMatch(/rows per training step/)
    expect(w.get('[data-test=model-epochs]').attributes('title')).toMatch(/accepted: an integer from 1 to 1000/)
    // the label names the box alone: its help text is a description, not part of its name
    expect(w.get('label[for=model-epochs]').text()).toBe('Epochs')
    expect(w.get('[data-test=model-epochs]').attributes('aria-describedby')).toBe('help-model-epochs err-model-epochs')
  })

  it('models 0 → message naming models next to the field, Run disabled', async () => {
    const w = setup()
    await w.get('[data-test=models]').setValue('0')
    const err = w.get('#err-models')
    expect(err.text()).toBe('Models (N) must be an integer from 1 to 1000 (you typed "0")')
    expect(w.get('[data-test=models]').attributes('aria-invalid')).toBe('true')
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
    expect(w.get('[data-test=estimate]').text()).toMatch(/Fix the fields/)

    await w.get('[data-test=models]').setValue('8')
    expect(w.find('#err-models').exists()).toBe(false)
    expect(w.get('[data-test=run]').attributes('disabled')).toBeUndefined()
  })

  it('workers above models → message on workers', async () => {
    const w = setup()
    await w.get('[data-test=models]').setValue('4')
    await w.get('[data-test=workers]').setValue('2, 8')
    expect(w.get('#err-workers').text()).toMatch(/^Workers \(W\) 8 is more than models 4/)
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
  })

  it('a non-number in a list and an empty epoch field are named', async () => {
    const w = setup()
    await w.get('[data-test=model-hidden]').setValue('64, abc')
    expect(w.get('#err-model-hidden').text()).toBe('Hidden layers: "abc" is not a number; enter 1 to 4 comma-separated integers from 1 to 4096')
    expect(w.get('[data-test=model-hidden]').attributes('aria-invalid')).toBe('true')
    // the list keeps the text as typed
    expect((w.get('[data-test=model-hidden]').element as HTMLInputElement).value).toBe('64, abc')
    await w.get('[data-test=model-epochs]').setValue('')
    expect(w.get('#err-model-epochs').text()).toBe('Epochs is empty; enter an integer from 1 to 1000')
  })

  it('no strategy checked → strategies message', async () => {
    const w = setup()
    for (const s of ['sequential', 'pool', 'batched']) await w.get(`[data-test=strategy-${s}]`).setValue(false)
    expect(w.get('#err-strategies').text()).toMatch(/^Strategies needs at least one/)
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
  })

  it('data sizes can be added, edited and removed; a bad size is flagged on its row', async () => {
    const w = setup()
    const cfg = useConfigStore()
    await w.get('[data-test=add-size]').trigger('click')
    expect(cfg.draft.sizes).toEqual([10_000, 20_000])
    await w.get('[data-test=size-1]').setValue('1')
    expect(w.get('[data-test=size-1]').attributes('aria-invalid')).toBe('true')
    expect(w.get('#err-sizes').text()).toBe('Data size 2 must be an integer from 2 to 2000000 (you typed "1")')
    await w.get('[data-test=remove-size-1]').trigger('click')
    expect(cfg.draft.sizes).toEqual([10_000])
    expect(w.find('#err-sizes').exists()).toBe(false)
  })

  it('an unavailable backend is shown with its reason and blocks Run', async () => {
    const w = setup()
    await useCapabilitiesStore().load()
    await flushPromises()
    const opt = w.get('[data-test=backend] option[value=tensorflow]')
    expect(opt.text()).toMatch(/unavailable/)
    expect(opt.attributes('title')).toMatch(/cuDNN/)
    expect(w.get('[data-test=backend] option[value=auto]').text()).toMatch(/auto → webgpu/)
    await w.get('[data-test=backend]').setValue('tensorflow')
    expect(w.get('[data-test=backend-detail]').text()).toMatch(/libcudnn/)
    expect(w.get('#err-backend').text()).toMatch(/not available here/)
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
  })
})

describe('model family', () => {
  it('the family picker lists every registered family by label (the MLP and trees)', () => {
    const w = setup()
    expect(w.findAll('[data-test=family] option').map((o) => o.text())).toEqual(allFamilies().map((f) => f.label))
    expect(allFamilies().map((f) => f.kind)).toEqual(['mlp', 'gbdt'])
    expect((w.get('[data-test=family]').element as HTMLSelectElement).value).toBe('mlp')
  })

  it("trees: picking the family shows its fields; the article's exact settings (no sampling) are said to train identical models", async () => {
    const w = setup()
    await w.get('[data-test=family]').setValue('gbdt')
    expect((w.get('[data-test=model-rounds]').element as HTMLInputElement).value).toBe('100')
    expect((w.get('[data-test=model-maxDepth]').element as HTMLInputElement).value).toBe('6')
    expect(w.find('[data-test=family-note]').exists()).toBe(false)
    await w.get('[data-test=model-subsample]').setValue('1')
    await w.get('[data-test=model-colsampleBytree]').setValue('1')
    expect(w.get('[data-test=family-note]').text()).toMatch(/every model trains the same trees/)
    await w.get('[data-test=model-maxDepth]').setValue('17')
    expect(w.get('[data-test=model-field-maxDepth]').text()).toMatch(/Max depth must be an integer from 1 to 16/)
    expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
  })

  it('a toy family registered in the test shows its own fields and validation, with no change to ConfigPanel', async () => {
    const unregister = registerFamily(toyFamily as unknown as ModelFamily)
    try {
      const w = setup()
      const cfg = useConfigStore()
      expect(w.findAll('[data-test=family] option').map((o) => o.text())).toContain('toy rounds model')
      await w.get('[data-test=family]').setValue('toy')
      // switching family starts from that family's defaults
      expect(cfg.draft.model).toEqual(toyFamily.defaults)
      const labels = w.findAll('[data-test=model-fields] [data-test^=model-field-]').map((f) => f.find('label').text())
      expect(labels).toEqual(['Rounds', 'Shrinkage', 'Leaf widths'])
      expect(w.find('[data-test=model-epochs]').exists()).toBe(false)
      expect((w.get('[data-test=model-widths]').element as HTMLInputElement).value).toBe('8, 4')
      expect(w.get('[data-test=model-shrink]').attributes('inputmode')).toBe('decimal')
      // inline validation comes from the toy's own schema
      await w.get('[data-test=model-rounds]').setValue('0')
      expect(w.get('#err-model-rounds').text()).toMatch(/^Rounds must be an integer from 1 to 500/)
      expect(w.get('[data-test=run]').attributes('disabled')).toBeDefined()
      await w.get('[data-test=model-rounds]').setValue('50')
      await w.get('[data-test=model-widths]').setValue('16, 8, 4, 2')
      expect(w.get('#err-model-widths').text()).toMatch(/^Leaf widths takes at most 3 values/)
      await w.get('[data-test=model-widths]').setValue('16')
      expect(w.find('.field-error').exists()).toBe(false)
      expect(cfg.config?.model).toEqual({ kind: 'toy', rounds: 50, shrink: 0.1, widths: [16] })
      // the estimate uses the toy's own counts: every plan entry once
      expect(w.get('[data-test=estimate-measurements]').text()).toBe(`${expandPlan(cfg.config!).length} measurements`)
      // and back: the MLP with its defaults
      await w.get('[data-test=family]').setValue('mlp')
      expect(cfg.draft.model).toEqual(mlpFamily.defaults)
      expect((w.get('[data-test=model-hidden]').element as HTMLInputElement).value).toBe('64')
    } finally {
      unregister()
    }
  })
})

describe('estimate', () => {
  // the run: 2 000 / 5 000 rows, 8 models, W 1 and 2, all three strategies, 3 repeats
  const several = () => presetConfig('quick', { preset: 'custom', sizes: [2000, 5000], models: [8], workers: [1, 2], repeats: 3, model: { epochs: 3 } })

  it('counts the real plan: sequential once per size, not once per W (30 measurements, not 36)', async () => {
    const w = setup()
    useConfigStore().replace(several())
    await flushPromises()
    expect(expandPlan(several())).toHaveLength(30)
    expect(w.get('[data-test=estimate-measurements]').text()).toBe('30 measurements')
  })

  it('says "estimating…" until the capabilities arrive, then the time on the backend auto resolves to', async () => {
    const w = setup()
    expect(w.get('[data-test=estimate-time]').text()).toBe('time: estimating…')
    expect(w.get('[data-test=estimate]').text()).not.toMatch(/cpu/)
    await useCapabilitiesStore().load()
    await flushPromises()
    expect(w.get('[data-test=estimate]').text()).toMatch(/\(webgpu, assumed speed\)/)
    expect(w.get('[data-test=estimate-time]').text()).toMatch(/^≈ \d/)
  })

  it('shows the memory the service will check (the same estimateRunPeakBytes)', async () => {
    const w = setup()
    const cfg = useConfigStore()
    cfg.replace(several())
    await flushPromises()
    expect(cfg.estimate?.peakTotalBytes).toBe(estimateRunPeakBytes(cfg.config!))
    expect(w.get('[data-test=estimate]').text()).toContain(`peak ≈ ${formatBytes(estimateRunPeakBytes(cfg.config!))}`)
  })
})

describe('presets', () => {
  it('the article preset applies 10k/50k/100k/200k × 50 models × 5 workers', async () => {
    const w = setup()
    const labels = w.findAll('[data-test=preset] option').map((o) => o.text())
    expect(labels).toContain(PRESETS.article.label)
    await w.get('[data-test=preset]').setValue('article')
    const cfg = useConfigStore()
    expect(cfg.draft.sizes).toEqual([10_000, 50_000, 100_000, 200_000])
    expect(cfg.draft.models).toEqual([50])
    expect(cfg.draft.workers).toEqual([5])
    expect(cfg.config?.preset).toBe('article')
    expect((w.get('[data-test=models]').element as HTMLInputElement).value).toBe('50')
    expect(w.findAll('[data-test^=size-]')).toHaveLength(4)
  })

  it('editing after a preset marks the sent config custom', async () => {
    const w = setup()
    await w.get('[data-test=preset]').setValue('smoke')
    expect(useConfigStore().config?.preset).toBe('smoke')
    await w.get('[data-test=model-epochs]').setValue('5')
    expect(useConfigStore().config?.preset).toBe('custom')
    expect((w.get('[data-test=preset]').element as HTMLSelectElement).value).toBe('')
    // back to the preset's workload: it is the preset again
    await w.get('[data-test=model-epochs]').setValue('1')
    expect(useConfigStore().config?.preset).toBe('smoke')
    expect((w.get('[data-test=preset]').element as HTMLSelectElement).value).toBe('smoke')
  })

  it('picking the backend after a preset keeps the preset name (backend is not workload)', async () => {
    const w = setup()
    await useCapabilitiesStore().load()
    await flushPromises()
    await w.get('[data-test=preset]').setValue('smoke')
    await w.get('[data-test=backend]').setValue('wasm')
    const cfg = useConfigStore()
    expect(cfg.draft.backend).toBe('wasm')
    expect(cfg.config?.preset).toBe('smoke')
    expect(cfg.config?.backend).toBe('wasm')
    expect((w.get('[data-test=preset]').element as HTMLSelectElement).value).toBe('smoke')
    // what Run sends, hence what History shows
    await w.get('form').trigger('submit')
    await flushPromises()
    const sent = service.callsTo('start')[0].config
    expect(sent.preset).toBe('smoke')
    expect(sent.backend).toBe('wasm')
  })

  it('a failure policy change keeps the preset; a workload change (models, workers, sizes, repeats) makes it custom', async () => {
    setup()
    const cfg = useConfigStore()
    cfg.applyPreset('quick')
    cfg.draft.failurePolicy = 'continue'
    expect(cfg.config?.preset).toBe('quick')
    for (const edit of [
      () => cfg.setList('models', '8'),
      () => cfg.setList('workers', '1'),
      () => cfg.addSize(),
      () => (cfg.draft.repeats = 5),
      () => (cfg.draft.target = 'noise'),
    ]) {
      cfg.applyPreset('quick')
      expect(cfg.config?.preset).toBe('quick')
      edit()
      expect(cfg.config?.preset).toBe('custom')
    }
  })

  it('applying a preset keeps the chosen backend and failure policy', () => {
    setup()
    const cfg = useConfigStore()
    cfg.draft.backend = 'cpu'
    cfg.draft.failurePolicy = 'continue'
    cfg.applyPreset('smoke')
    expect(cfg.draft.backend).toBe('cpu')
    expect(cfg.draft.failurePolicy).toBe('continue')
    expect(cfg.config?.preset).toBe('smoke')
  })
})

describe('Run button', () => {
  it('sends the validated config through the bridge and is disabled while running', async () => {
    const w = setup()
    let resolve!: (v: { runId: string }) => void
    service.respond('start', () => new Promise((r) => (resolve = r)))
    await w.get('[data-test=models]').setValue('8')
    await w.get('form').trigger('submit')
    expect(service.callsTo('start')).toHaveLength(1)
    expect(service.callsTo('start')[0].config.models).toEqual([8])
    // while a run starts and runs, Run refuses presses but keeps the keyboard focus (aria-disabled, not disabled)
    expect(w.get('[data-test=run]').attributes('aria-disabled')).toBe('true')
    expect(w.get('[data-test=run]').attributes('disabled')).toBeUndefined()
    expect(w.get('[data-test=run]').text()).toMatch(/Starting/)
    resolve({ runId: 'r1' })
    await flushPromises()
    expect(useRunStore().status).toBe('running')
    expect(w.get('[data-test=run]').attributes('aria-disabled')).toBe('true')
    await w.get('form').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')).toHaveLength(1)
  })

  it('shows the start error and the field issues the service returned', async () => {
    const w = setup()
    service.fail(
      'start',
      new TrainpoolError('insufficient-memory', 'the run needs about 40 GiB, more than the 12 GiB free', [
        { field: 'sizes', message: 'sizes 2000000 needs about 40 GiB' },
      ]),
    )
    await w.get('form').trigger('submit')
    await flushPromises()
    expect(w.get('[data-test=start-error]').text()).toMatch(/needs about 40 GiB, more than the 12 GiB free/)
    expect(w.get('#err-sizes').text()).toMatch(/40 GiB/)
    // editing clears the service's verdict
    await w.get('[data-test=size-0]').setValue('20000')
    expect(w.find('#err-sizes').exists()).toBe(false)
    expect(w.get('[data-test=run]').attributes('disabled')).toBeUndefined()
  })
})
