// `node --import ./scripts/strip-types.js file.ts`: runs TypeScript with its types erased (see
// strip-types-hooks.js).
import module from 'node:module'

// In-thread hooks from the Node where tap uses them too (24.13.1; earlier ones had faults): no
// hooks thread, no message to it for every module loaded.
const [major, minor, patch] = process.versions.node.split('.').map(Number)
if (module.registerHooks !== undefined && (major > 24 || (major === 24 && (minor > 13 || (minor === 13 && patch >= 1))))) {
  const { resolve, load } = await import('./strip-types-hooks.js')
  module.registerHooks({ resolve, load })
} else {
  module.register('./strip-types-hooks.js', import.meta.url)
}
