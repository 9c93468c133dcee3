// Advice you can trust (issue 15): fits of a run's own times (linear-fit.ts: time against N;
// worker-scaling.ts: Amdahl/USL against W) and the advice and its check built on them (advise.ts).
export * from './advise'
export * from './linear-fit'
export * from './worker-scaling'
