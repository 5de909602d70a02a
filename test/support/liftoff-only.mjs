// Loaded by every process a test starts through toolEnv (its NODE_OPTIONS): PGlite's
// WebAssembly runs on V8's baseline compiler only, as in the test processes themselves (.taprc
// node-arg). The optimizing tier would recompile the hot functions in the background, CPU that a
// service started for a test, seconds long, never wins back. The code computes the same.
// NODE_OPTIONS takes no V8 flag, so they are set here, before any module compiles WebAssembly.
// From Node 24, `--liftoff-only` set at run time no longer takes effect; a tier-up budget that no
// function of a process this short ever spends keeps them all on the baseline tier there too.
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--liftoff-only')
setFlagsFromString('--wasm-tiering-budget=1000000000')
