// `npm run lint` and `npm run typecheck` side by side (one core each), each one's output kept
// whole and printed when it ends; fails when either does.
import { spawn } from 'node:child_process'

const run = (script) => new Promise((resolve) => {
  const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  child.stderr.on('data', (chunk) => { out += chunk })
  child.on('close', (code) => {
    process.stdout.write(`${script}: ${code === 0 ? 'passed' : `failed (exit ${code})`}\n${out}`)
    resolve(code === 0)
  })
})

const results = await Promise.all([run('lint'), run('typecheck')])
process.exit(results.every(Boolean) ? 0 : 1)
