// What the models learn, in the config panel over the one FakeService: the objective and metric
// pickers beside the family (auto by default, left out of the config), the metrics offered for the
// objective, generated classification targets with their class count, the task said in words once
// the target is known — generated data's from its target, the user's from its target column's
// values ("binary (2 classes: no, yes)") — and every refusal shown under its box as the other
// fields' are, with Run disabled: the schema's for generated data, the service's own check of the
// user's target for a file (the schema cannot see its values).
import { flushPromises, mount } from '@vue/test-utils'
import { createPinia, setActivePinia } from 'pinia'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CHURN_SHA, churnDataSet, fakeDataSet, HOUSES_SHA } from '@shared/testing/data-sets'
import { fakeBridge, FakeService } from '@shared/testing/fake-service'
import { setBridge } from '../bridge'
import { useCapabilitiesStore } from '../stores/capabilities'
import { useConfigStore } from '../stores/config'
import ConfigPanel from './ConfigPanel.vue'

let service: FakeService

async function setup() {
  service.capabilitiesValue = { ...service.capabilitiesValue, shell: 'browser' }
  const pinia = createPinia()
  setActivePinia(pinia)
  const w = mount(ConfigPanel, { global: { plugins: [pinia] }, attachTo: document.body })
  await useCapabilitiesStore().load()
  await flushPromises()
  return w
}
type Panel = Awaited<ReturnType<typeof setup>>

const options = (w: Panel, test: string) => w.findAll(`[data-test=${test}] option`).map((o) => o.text())
const selected = (w: Panel, test: string) => (w.get(`[data-test=${test}]`).element as HTMLSelectElement).value
const runDisabled = (w: Panel) => w.get('[data-test=run]').attributes('disabled') !== undefined

async function pickFile(w: Panel, sha: string) {
  await w.get('[data-test=source-file]').setValue(true)
  await w.get('[data-test=data-recent]').setValue(sha)
  await flushPromises()
}

beforeEach(() => {
  localStorage.clear()
  service = new FakeService().addDataSet(fakeDataSet()).addDataSet(churnDataSet())
  setBridge(fakeBridge(service))
})
afterEach(() => {
  setBridge(null)
  document.body.innerHTML = ''
})

describe('ConfigPanel: objective and metric', () => {
  it('the pickers sit beside the family, auto by default, and auto stays out of the config', async () => {
    const w = await setup()
    const model = w.get('[data-test=model-fields]')
    expect(model.get('label[for=config-objective]').text()).toBe('Objective')
    expect(model.get('label[for=config-metric]').text()).toBe('Metric')
    expect(options(w, 'objective')).toEqual(['auto', 'regression', 'binary', 'multiclass'])
    expect([selected(w, 'objective'), selected(w, 'metric')]).toEqual(['auto', 'auto'])
    // the default generated target (teacher) is a regression target: MSE its only metric, said as auto's
    expect(options(w, 'metric')).toEqual(['auto (MSE)', 'MSE'])
    expect(w.get('[data-test=task]').text()).toBe('Task: regression, read from the target · ranked by MSE')
    const config = useConfigStore().config!
    expect(config).not.toHaveProperty('objective')
    expect(config).not.toHaveProperty('metric')
  })

  it('generated binary data: binary (2 classes: 0, 1); the metrics of a classifier offered, the chosen one sent', async () => {
    const w = await setup()
    expect(options(w, 'target')).toEqual(['teacher', 'noise', 'binary', 'multiclass'])
    await w.get('[data-test=target]').setValue('binary')
    expect(w.get('[data-test=task]').text()).toBe('Task: binary (2 classes: 0, 1), read from the target · ranked by log loss')
    expect(options(w, 'metric')).toEqual(['auto (log loss)', 'log loss', 'accuracy', 'ROC AUC'])
    await w.get('[data-test=metric]').setValue('accuracy')
    expect(w.get('[data-test=task]').text()).toBe('Task: binary (2 classes: 0, 1), read from the target · ranked by accuracy')
    await w.get('[data-test=objective]').setValue('binary')
    expect(w.get('[data-test=task]').text()).toBe('Task: binary (2 classes: 0, 1) · ranked by accuracy')
    expect(w.find('.field-error').exists()).toBe(false)
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')[0].config).toMatchObject({ target: 'binary', objective: 'binary', metric: 'accuracy' })
    expect(service.startedTask).toEqual({ objective: 'binary', classes: ['0', '1'], metric: 'accuracy', auto: false })
    // auto again: left out of the config
    await w.get('[data-test=objective]').setValue('auto')
    await w.get('[data-test=metric]').setValue('auto')
    expect(useConfigStore().draft).not.toHaveProperty('objective')
    expect(useConfigStore().draft).not.toHaveProperty('metric')
  })

  it('generated multiclass data has a classes box (5 when empty), checked like the other number boxes; it goes with another target', async () => {
    const w = await setup()
    expect(w.find('[data-test=classes]').exists()).toBe(false)
    await w.get('[data-test=target]').setValue('multiclass')
    expect(w.get('[data-test=classes]').attributes('placeholder')).toBe('5')
    expect(w.get('[data-test=task]').text()).toBe('Task: multiclass (5 classes: 0, 1, 2, 3, 4), read from the target · ranked by log loss')
    expect(options(w, 'metric')).toEqual(['auto (log loss)', 'log loss', 'accuracy'])
    await w.get('[data-test=classes]').setValue('3')
    expect(w.get('[data-test=task]').text()).toMatch(/^Task: multiclass \(3 classes: 0, 1, 2\)/)
    await w.get('[data-test=classes]').setValue('40')
    expect(w.get('#err-classes').text()).toBe('Classes must be an integer from 3 to 32 (you typed "40")')
    expect(w.get('[data-test=classes]').attributes('aria-invalid')).toBe('true')
    expect(w.find('[data-test=task]').exists()).toBe(false)
    expect(runDisabled(w)).toBe(true)
    await w.get('[data-test=classes]').setValue('x')
    expect(w.get('#err-classes').text()).toBe('Classes: "x" is not a number; enter a whole number from 3 to 32, or empty for 5')
    // another target takes the class count away: nothing left to refuse
    await w.get('[data-test=target]').setValue('teacher')
    expect(w.find('[data-test=classes]').exists()).toBe(false)
    expect(useConfigStore().draft).not.toHaveProperty('classes')
    expect(runDisabled(w)).toBe(false)
  })

  it("an objective or metric that contradicts the generated target: the schema's message under its box, Run disabled", async () => {
    const w = await setup()
    await w.get('[data-test=objective]').setValue('binary')
    expect(w.get('#err-objective').text()).toMatch(/^Objective binary does not fit generated target teacher, a regression target; accepted: auto, regression/)
    expect(w.get('[data-test=objective]').attributes('aria-invalid')).toBe('true')
    expect(w.find('[data-test=task]').exists()).toBe(false)
    expect(runDisabled(w)).toBe(true)
    expect(w.get('[data-test=invalid-hint]').text()).toBe('1 field to fix')
    // with the asked objective the metrics offered are a classifier's
    expect(options(w, 'metric')).toEqual(['auto', 'log loss', 'accuracy', 'ROC AUC'])
    await w.get('[data-test=target]').setValue('multiclass')
    expect(w.get('#err-objective').text()).toMatch(/^Objective binary does not fit generated target multiclass/)
    await w.get('[data-test=objective]').setValue('multiclass')
    await w.get('[data-test=metric]').setValue('accuracy')
    expect(w.find('.field-error').exists()).toBe(false)
    // AUC is offered for binary only; a config that asks it of multiclass keeps it in the list with its error
    useConfigStore().setMetric('auc')
    await flushPromises()
    expect(options(w, 'metric')).toEqual(['auto', 'log loss', 'accuracy', 'ROC AUC'])
    expect(selected(w, 'metric')).toBe('auc')
    expect(w.get('#err-metric').text()).toBe('Metric auc does not apply to a multiclass run; accepted: auto, logloss, accuracy')
    expect(w.get('[data-test=metric]').attributes('aria-invalid')).toBe('true')
    expect(runDisabled(w)).toBe(true)
  })
})

describe("ConfigPanel: the user's data decides the task", () => {
  it('a file whose last column is yes/no: that column is the target, and the panel says binary (2 classes: no, yes)', async () => {
    const w = await setup()
    await pickFile(w, CHURN_SHA)
    expect(selected(w, 'data-target')).toBe('churn')
    // numeric columns and the text columns of class labels can be the target; a feature is numeric
    expect(options(w, 'data-target')).toEqual(['tenure', 'monthly', 'calls', 'plan (class labels)', 'churn (class labels)'])
    expect(w.get('[data-test=data-column-churn]').findAll('td')[2].text()).toBe('2 values: no, yes')
    expect(w.get('[data-test=task]').text()).toBe('Task: binary (2 classes: no, yes), read from the target · ranked by log loss')
    expect(options(w, 'metric')).toEqual(['auto (log loss)', 'log loss', 'accuracy', 'ROC AUC'])
    await w.get('[data-test=data-all-rows]').trigger('click')
    expect(w.findAll('.field-error').map((e) => e.text())).toEqual([])
    await w.get('[data-test=run]').trigger('submit')
    await flushPromises()
    expect(service.callsTo('start')[0].config.data).toMatchObject({ sha256: CHURN_SHA, target: 'churn' })
    expect(service.startedTask).toEqual({ objective: 'binary', classes: ['no', 'yes'], metric: 'logloss', auto: true })
  })

  it('a text target of three values is multiclass; a small-integer column is read as classes too, other numbers as regression', async () => {
    const w = await setup()
    await pickFile(w, CHURN_SHA)
    await w.get('[data-test=data-target]').setValue('plan')
    expect(w.get('[data-test=task]').text()).toBe('Task: multiclass (3 classes: basic, family, pro), read from the target · ranked by log loss')
    await w.get('[data-test=data-target]').setValue('calls')
    expect(w.get('[data-test=task]').text()).toMatch(/^Task: multiclass \(4 classes: 0, 1, 2, 3\)/)
    await w.get('[data-test=data-target]').setValue('monthly')
    expect(w.get('[data-test=task]').text()).toBe('Task: regression, read from the target · ranked by MSE')
  })

  it("an objective the target cannot be: the service's refusal under the objective box before Run; so is a metric", async () => {
    const w = await setup()
    await pickFile(w, CHURN_SHA)
    await w.get('[data-test=objective]').setValue('multiclass')
    expect(w.get('#err-objective').text()).toBe('Objective multiclass needs 3 to 32 classes; churn has 2 (no, yes): accepted: auto, binary')
    expect(w.find('[data-test=task]').exists()).toBe(false)
    expect(runDisabled(w)).toBe(true)
    await w.get('[data-test=objective]').setValue('regression')
    expect(w.get('#err-objective').text()).toMatch(/^Objective regression needs a numeric target; churn is text \(2 classes\)/)
    await w.get('[data-test=objective]').setValue('auto')
    expect(w.find('#err-objective').exists()).toBe(false)
    await w.get('[data-test=data-target]').setValue('plan')
    useConfigStore().setMetric('auc')
    await flushPromises()
    expect(w.get('#err-metric').text()).toBe('Metric auc does not apply to a multiclass run; accepted: auto, logloss, accuracy')
    expect(runDisabled(w)).toBe(true)
  })

  it('a data set cached before its values were listed: the panel cannot tell, and says the target decides at the start', async () => {
    service.addDataSet(churnDataSet({ cacheVersion: undefined }))
    const w = await setup()
    await pickFile(w, CHURN_SHA)
    await w.get('[data-test=data-target]').setValue('calls')
    expect(w.get('[data-test=task]').text()).toBe('Task: objective: auto — read from the target when the run starts')
    await w.get('[data-test=objective]').setValue('binary')
    expect(w.get('[data-test=task]').text()).toBe('Task: objective: binary — checked against the target when the run starts')
  })

  it("a preset keeps the file's objective and metric; on generated data it takes the preset's target and drops them", async () => {
    const w = await setup()
    await pickFile(w, CHURN_SHA)
    await w.get('[data-test=objective]').setValue('binary')
    await w.get('[data-test=metric]').setValue('auc')
    await w.get('[data-test=preset]').setValue('smoke')
    expect([selected(w, 'objective'), selected(w, 'metric')]).toEqual(['binary', 'auc'])
    expect(w.get('[data-test=task]').text()).toBe('Task: binary (2 classes: no, yes) · ranked by ROC AUC')
    await w.get('[data-test=source-generated]').setValue(true)
    await w.get('[data-test=target]').setValue('binary')
    await w.get('[data-test=preset]').setValue('quick')
    expect([selected(w, 'target'), selected(w, 'objective'), selected(w, 'metric')]).toEqual(['teacher', 'auto', 'auto'])
    expect(w.find('.field-error').exists()).toBe(false)
    // the houses file's last column is a price: regression
    await pickFile(w, HOUSES_SHA)
    expect(w.get('[data-test=task]').text()).toBe('Task: objective: auto — read from the target when the run starts')
  })
})
