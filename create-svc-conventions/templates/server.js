import { imp, ts } from '../lib/code.js'

/** server.(ts|js): `npm start`; listens, and stops cleanly on SIGTERM or SIGINT. */
export default function server (ctx) {
  return `${imp(ctx, './config.js', { names: ['loadConfig'] })}${imp(ctx, './app.js', { names: ['buildApp'] })}
// \`npm start\`: reads the environment, opens the store, listens. On SIGTERM or SIGINT it stops
// taking requests, finishes those in flight, closes the store and exits.
async function main ()${ts(ctx, ': Promise<void>')} {
  const { config, warnings } = loadConfig(process.env)
  const app = await buildApp(config)
  for (const warning of warnings) app.log.warn(warning)
  // One Ctrl-C under \`npm start\` arrives twice, from the terminal and from npm (npm scripts set
  // npm_lifecycle_event): the copy is ignored, and the signal after it exits at once, without
  // waiting for requests in flight.
  const copies = process.env.npm_lifecycle_event === undefined ? 1 : 2
  let signals = 0
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      signals++
      if (signals > copies) process.exit(1)
      if (signals > 1) return
      app.log.info({ signal }, 'stopping')
      app.close().then(() => process.exit(0), (err${ts(ctx, ': unknown')}) => {
        app.log.error({ err }, 'stopping failed')
        process.exit(1)
      })
    })
  }
  await app.listen({ host: config.host, port: config.port })
}

main().catch((err${ts(ctx, ': unknown')}) => {
  process.stderr.write(\`\${err instanceof Error ? err.message : String(err)}\\n\`)
  process.exit(1)
})
`
}
