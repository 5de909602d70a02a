// tap's `before` (.taprc): the tests that run dist/ (the first run, the packed package) see the
// sources as they are now. A build is made only when a source changed since the last one.
process.argv.push('--if-needed')
await import('./build.js')
