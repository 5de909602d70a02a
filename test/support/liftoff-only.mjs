// Loaded by every process a test starts through toolEnv (its NODE_OPTIONS): PGlite's
// WebAssembly runs on V8's baseline compiler only, as in the test processes themselves (.taprc
// node-arg). A service started on PGlite then spends about two fifths less CPU getting ready:
// the optimizing tier recompiles the hot functions in the background, work a process seconds
// long never wins back. The code computes the same. NODE_OPTIONS takes no V8 flag, so it is set
// here, before any module compiles WebAssembly.
import { setFlagsFromString } from 'node:v8'

setFlagsFromString('--liftoff-only')
