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
  // One Ctrl-C under \`npm start\` arrives twice, from the terminal and from npm: a signal within
  // a second of the first is the same stop; a later one exits at once, without waiting.
  let stopping${ts(ctx, ': number | undefined')}
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      if (stopping !== undefined) {
        if (Date.now() - stopping >= 1000) process.exit(1)
        return
      }
      stopping = Date.now()
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
