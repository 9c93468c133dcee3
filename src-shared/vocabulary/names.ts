// The run configuration's word lists, below the contract, so the model families (which the
// configuration's schema consults) can name presets and strategies without importing the schema.
export const STRATEGIES = ['sequential', 'pool', 'batched'] as const
/** generated data: a regression target (teacher, noise) or a classification one (binary, multiclass: make_classification's clusters) */
export const TARGETS = ['teacher', 'noise', 'binary', 'multiclass'] as const
export const PRESET_NAMES = ['smoke', 'quick', 'article'] as const
export const FAILURE_POLICIES = ['stop', 'continue'] as const

export type Strategy = (typeof STRATEGIES)[number]
export type Target = (typeof TARGETS)[number]
export type PresetName = (typeof PRESET_NAMES)[number]
