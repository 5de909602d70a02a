// Loaded into every test process (.taprc, node-arg). Property tests (fast-check) explore new
// cases on every run, and fast-check prints the seed of a failure. CI runs one fixed seed, so a
// submission's result is reproducible, the coverage gate's included: a branch reached only by
// some generated cases cannot pass one run and fail the next. FC_SEED=<n> replays a seed anywhere
// (FUZZ_SEED, its older name, too).
import fc from 'fast-check'

const seed = process.env.FC_SEED ?? process.env.FUZZ_SEED ?? (process.env.CI === 'true' ? '20261121' : undefined)
if (seed !== undefined) fc.configureGlobal({ seed: Number(seed) })
