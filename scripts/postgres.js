// A throwaway PostgreSQL server for the tests and benchmarks: initdb into a temp dir (as the
// `postgres` user when run as root, since initdb refuses root), a free loopback port,
// stopped and removed by stop().
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, chownSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

function bindir () {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim()
    if (existsSync(join(dir, 'initdb'))) return dir
  } catch {}
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : []
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin')
  throw new Error('PostgreSQL server binaries not found (install Debian\'s postgresql package)')
}

/** True when the PostgreSQL server binaries are installed (tests that need them skip otherwise). */
export function havePostgres () {
  try {
    bindir()
    return true
  } catch {
    return false
  }
}

function freePort () {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)) })
    s.once('error', reject)
  })
}

// `hba`: pg_hba.conf lines put before initdb's (which trust every local connection), for tests
// of authentication: the first line that matches a connection decides.
export async function startPostgres ({ settings = {}, hba = [] } = {}) {
  const bin = bindir()
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'))
  const root = process.getuid?.() === 0
  const run = (cmd, args) => {
    const full = join(bin, cmd)
    const r = root
      ? spawnSync('runuser', ['-u', 'postgres', '--', full, ...args], { encoding: 'utf8' })
      : spawnSync(full, args, { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`)
  }
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(dir, uid, gid)
  }
  const port = await freePort()
  run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8'])
  if (hba.length > 0) {
    const file = join(dir, 'data', 'pg_hba.conf')
    writeFileSync(file, `${hba.join('\n')}\n${readFileSync(file, 'utf8')}`)
  }
  const opts = { listen_addresses: '127.0.0.1', max_connections: 200, fsync: 'off', shared_buffers: '256MB', ...settings }
  const o = [`-p ${port}`, `-k ${dir}`, ...Object.entries(opts).map(([k, v]) => `-c ${k}=${v}`)].join(' ')
  run('pg_ctl', ['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-t', '60', '-o', o, 'start'])
  let stopped = false
  const stop = () => {
    if (stopped) return
    stopped = true
    try { thaw() } catch {}
    try { run('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', 'stop']) } catch {}
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', stop)
  // Fault tests: pause() stops the server but keeps its data ('fast' ends sessions cleanly,
  // 'immediate' is a crash); resume() starts it again on the same port. Both asynchronous,
  // so the caller's load keeps running meanwhile.
  const ctl = (args) => new Promise((resolve, reject) => {
    const full = join(bin, 'pg_ctl')
    const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args]
    execFile(file, argv, { encoding: 'utf8' }, (err, out, errOut) => {
      if (err === null) resolve()
      else reject(new Error(`pg_ctl ${args.at(-1)} failed: ${errOut || out || err.message}`))
    })
  })
  const pause = ({ mode = 'fast' } = {}) => ctl(['-D', join(dir, 'data'), '-m', mode, '-w', 'stop'])
  const resume = () => ctl(['-D', join(dir, 'data'), '-l', join(dir, 'log'), '-w', '-t', '60', '-o', o, 'start'])
  // freeze() stops every process of the server where it stands (SIGSTOP): connections stay open
  // and nothing answers, as with a server that hangs or a cut-off network; thaw() lets it go on.
  const processes = () => {
    const postmaster = readFileSync(join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0].trim()
    const children = spawnSync('pgrep', ['-P', postmaster], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
    return [postmaster, ...children].map(Number)
  }
  const signalAll = (signal) => { for (const pid of processes()) { try { process.kill(pid, signal) } catch {} } }
  const freeze = () => signalAll('SIGSTOP')
  const thaw = () => signalAll('SIGCONT')
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, stop, pause, resume, freeze, thaw }
}
