// The config panel's one dropdown: its label is the select's, v-model takes the chosen value (the
// shown one follows the model, not the last click), each option's words and title are the caller's,
// and the hint and errors describe it for screen readers, aria-invalid following its messages unless told.
import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import SelectField from './SelectField.vue'

const options = [
  { value: 'cpu', label: 'CPU' },
  { value: 'webgpu', label: 'WebGPU (unavailable)', title: 'no adapter' },
]
const base = { id: 'config-x', label: 'Backend', dataTest: 'x', options, modelValue: 'cpu' }

describe('SelectField', () => {
  it('labels the select, lists the options and gives v-model the chosen value', async () => {
    const w = mount(SelectField, { props: base })
    const select = w.get('select')
    expect(w.get('label').attributes('for')).toBe('config-x')
    expect(w.get('label').text()).toBe('Backend')
    expect(select.attributes('id')).toBe('config-x')
    expect(select.attributes('data-test')).toBe('x')
    expect(w.findAll('option').map((o) => [o.attributes('value'), o.text(), o.attributes('title')])).toEqual([
      ['cpu', 'CPU', undefined],
      ['webgpu', 'WebGPU (unavailable)', 'no adapter'],
    ])
    expect((select.element as HTMLSelectElement).value).toBe('cpu')
    await select.setValue('webgpu')
    expect(w.emitted('update:modelValue')).toEqual([['webgpu']])
    // the model decides what is shown
    await w.setProps({ modelValue: 'webgpu' })
    expect((select.element as HTMLSelectElement).value).toBe('webgpu')
    // no errors asked for: no error list, nothing describes it, not invalid
    expect(select.attributes('aria-describedby')).toBeUndefined()
    expect(select.attributes('aria-invalid')).toBeUndefined()
    expect(w.find('[role=alert]').exists()).toBe(false)
  })

  it('its notes, hint and errors describe it; invalid while it has messages, or when told', async () => {
    const w = mount(SelectField, {
      props: { ...base, describedBy: 'task-text', help: 'what runs the models', messages: [], errorId: 'err-x' },
      slots: { default: '<small id="extra" data-test="extra">more</small>' },
    })
    const select = w.get('select')
    expect(select.attributes('aria-describedby')).toBe('task-text help-config-x err-x')
    expect(w.get('#help-config-x').text()).toBe('what runs the models')
    expect(w.find('[data-test=extra]').exists()).toBe(true)
    expect(select.attributes('aria-invalid')).toBeUndefined()
    await w.setProps({ messages: ['Backend tensorflow is not installed'] })
    expect(w.get('#err-x').text()).toBe('Backend tensorflow is not installed')
    expect(select.attributes('aria-invalid')).toBe('true')
    // a caller that knows better (the backend's own issues, not its compared boxes') says so
    await w.setProps({ invalid: false })
    expect(select.attributes('aria-invalid')).toBeUndefined()
    await w.setProps({ messages: [], invalid: true })
    expect(select.attributes('aria-invalid')).toBe('true')
  })
})
