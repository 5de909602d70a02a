// `node --import ./scripts/strip-types.js file.ts`: runs TypeScript with its types erased (see
// strip-types-hooks.js).
import { register } from 'node:module'

register('./strip-types-hooks.js', import.meta.url)
