import { mount } from '@vue/test-utils'
import { describe, expect, it } from 'vitest'
import { presetConfig } from '@shared/contract/config'
import { verificationFor } from '@shared/testing/fixtures'
import VerificationBadge from './VerificationBadge.vue'

const config = presetConfig('article')

describe('VerificationBadge', () => {
  it('green: same work, models per strategy and max Δ', () => {
    const w = mount(VerificationBadge, { props: { verification: verificationFor(config), expectedModels: 50 } })
    const badge = w.get('[data-test=verification]')
    expect(badge.classes()).toContain('verify-ok')
    expect(badge.text()).toContain('same work: 50/50 models per strategy, per-model MSE agree (max Δ 2.1e-7)')
  })

  it('red: lists the problems', () => {
    const w = mount(VerificationBadge, { props: { verification: verificationFor(config, true), expectedModels: 50 } })
    const badge = w.get('[data-test=verification]')
    expect(badge.classes()).toContain('verify-failed')
    expect(badge.text()).toMatch(/verification failed/)
    expect(w.findAll('.verify-problems li').map((l) => l.text())).toEqual([
      'model 3: batched test MSE 0.0931 differs from sequential 0.0922 by 9.9e-3 (tolerance 1e-4)',
    ])
  })

  it('red when a strategy trained fewer models, even before problems are written', () => {
    const v = { ...verificationFor(config), sameWork: false, modelsTrained: { sequential: 50, pool: 47, batched: 50 } }
    const w = mount(VerificationBadge, { props: { verification: v, expectedModels: 50 } })
    expect(w.get('[data-test=verification]').classes()).toContain('verify-failed')
    expect(w.text()).toMatch(/47\/50 models per strategy/)
    expect(w.text()).toMatch(/did not do the same work/)
  })

  it('pending while the run is going', () => {
    const w = mount(VerificationBadge, { props: { verification: null, expectedModels: 4, status: 'running' } })
    expect(w.get('[data-test=verification]').classes()).toContain('verify-pending')
    expect(w.text()).toMatch(/pending/)
  })

  it('grey, not red, for a cancelled run: "not verified: run cancelled", problems only in the details', () => {
    const v = {
      ...verificationFor(config),
      sameWork: false,
      modelsTrained: { sequential: 8, pool: 1, batched: 0 },
      problems: ['pool trained 1 of 8 models', 'batched trained 0 of 8 models'],
    }
    const w = mount(VerificationBadge, { props: { verification: v, expectedModels: 8, status: 'cancelled' } })
    const badge = w.get('[data-test=verification]')
    expect(badge.classes()).toContain('verify-unverified')
    expect(badge.classes()).not.toContain('verify-failed')
    expect(w.get('.verify-text').text()).toBe('not verified: run cancelled')
    expect(w.text()).not.toMatch(/verification failed/)
    expect(w.find('.verify-problems').exists()).toBe(false)
    const detail = w.get('[data-test=verification-partial]')
    expect(detail.element.tagName).toBe('DETAILS')
    expect(detail.text()).toMatch(/0\/8 models per strategy/)
    expect(detail.text()).toMatch(/pool trained 1 of 8 models/)
  })

  it('grey for an interrupted run, even without a verification', () => {
    const w = mount(VerificationBadge, { props: { verification: null, expectedModels: 8, status: 'interrupted' } })
    expect(w.get('[data-test=verification]').classes()).toContain('verify-unverified')
    expect(w.get('.verify-text').text()).toBe('not verified: run interrupted')
  })

  it('still red for a finished (failed) run whose strategies disagree', () => {
    const w = mount(VerificationBadge, { props: { verification: verificationFor(config, true), expectedModels: 50, status: 'failed' } })
    expect(w.get('[data-test=verification]').classes()).toContain('verify-failed')
  })
})

describe("VerificationBadge names the run's metric", () => {
  it('a classifier: the per-model log loss agree', () => {
    const w = mount(VerificationBadge, { props: { verification: verificationFor(config), expectedModels: 50, metric: 'logloss' } })
    expect(w.get('[data-test=verification]').text()).toContain('same work: 50/50 models per strategy, per-model log loss agree (max Δ 2.1e-7)')
  })
})
