// The engine's seeded pseudo-random numbers: their one home is src-shared/vocabulary/random.ts (the
// service draws the user's data's row sample with them too); re-exported so engine code imports them here.
export { mixSeed, permutation, Rng } from '@shared/vocabulary/random'
