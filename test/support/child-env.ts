/** Keeps a child process's WebAssembly on V8's baseline tier (see the file). */
const LIFTOFF_ONLY = `--import=${new URL('liftoff-only.mjs', import.meta.url).href}`

/**
 * The environment of a child process that runs a tool (npm, tsc, publint, an installed copy of
 * the package, the built service), not the suite's sources: this one without what tap adds (its
 * loaders in NODE_OPTIONS, V8 coverage collection, its own variables) and without what an npm
 * run around the tests adds, so that it runs as it would in a terminal. Its coverage is none of
 * the gate's: none of its files are the sources. The built service's reaches them through source
 * maps, at other columns, and merged with the sources' own it showed branches taken that its
 * requests never reach (the gate holds the plugins to the tests that run the sources).
 *
 * tap's process tracking wraps `spawn` and `execFile` in test processes and puts its loader back
 * into NODE_OPTIONS, with coverage on unless `_TAPJS_PROCESSINFO_COVERAGE_` says `0`: so that
 * one is kept, at `0`. NODE_OPTIONS holds one module of the suite's own, which changes how V8
 * compiles WebAssembly and nothing the child computes (liftoff-only.mjs).
 */
export function toolEnv (extra: Record<string, string> = {}, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(env)) {
    if (/^(NODE_OPTIONS|NODE_V8_COVERAGE|TAP|_TAP|npm_lifecycle_|npm_package_|npm_command$|npm_config_local_prefix$)/i.test(key)) continue
    out[key] = value
  }
  return { ...out, NODE_OPTIONS: LIFTOFF_ONLY, _TAPJS_PROCESSINFO_COVERAGE_: '0', ...extra }
}
