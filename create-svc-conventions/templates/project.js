/** package.json: the suite and its peers at the versions the suite was tested with. */
export function packageJson (ctx) {
  const v = ctx.versions
  const run = ctx.typescript ? 'node --import tsx ' : 'node '
  const ext = ctx.typescript ? 'ts' : 'js'
  const pkg = {
    name: ctx.name,
    version: '0.1.0',
    private: true,
    type: ctx.esm ? 'module' : 'commonjs',
    engines: { node: '^20.19.0 || >=22.12.0' },
    scripts: {
      // exec: the shell gives its place to the service, so a SIGTERM sent to npm alone (a
      // container whose command is `npm start`) reaches it through npm.
      start: `exec ${run}server.${ext}`,
      // The shell expands the pattern (Node 20's test runner takes no patterns of its own).
      test: `${ctx.typescript ? 'tsc --noEmit && ' : ''}${run}--test test/*.test.${ext}`,
      token: `${run}bin/token.${ext}`
    },
    dependencies: {
      'svc-conventions': ctx.suite,
      fastify: v.fastify,
      // The log's destination (app.js); Fastify logs through pino already.
      pino: v.pino,
      '@sinclair/typebox': v['@sinclair/typebox'],
      // TypeScript runs through tsx, in production too: nothing to build.
      ...(ctx.typescript ? { tsx: v.tsx } : {})
    },
    ...(ctx.typescript ? { devDependencies: { '@types/node': v['@types/node'], typescript: v.typescript } } : {})
  }
  return JSON.stringify(pkg, null, 2) + '\n'
}

/**
 * tsconfig.json: strict, checked by `npm test`; tsx runs the sources as they are. CommonJS
 * sources are checked as the bundler resolution sees them: under NodeNext they would get
 * TypeBox's CommonJS types while the suite, an ES module, has its ES module types, and the two
 * do not match (at run time both use the same global symbols).
 */
export function tsconfig (ctx) {
  return JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      ...(ctx.esm ? { module: 'NodeNext', moduleResolution: 'NodeNext' } : { module: 'preserve', moduleResolution: 'bundler' }),
      lib: ['ES2023'],
      types: ['node'],
      strict: true,
      isolatedModules: true,
      skipLibCheck: true,
      noEmit: true
    },
    include: ['*.ts', 'resources', 'bin', 'test']
  }, null, 2) + '\n'
}

export function gitignore () {
  return 'node_modules/\ndata/\n*.tgz\n'
}
