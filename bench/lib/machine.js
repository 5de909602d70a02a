// Where a case's CPU goes besides the server it loads: the PostgreSQL server's processes and the
// whole machine, read from Linux's /proc. Elsewhere, or with no PostgreSQL server on this
// machine (BENCH_DATABASE_URL naming another), the readers answer null and the figures read n/a.
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

const linux = process.platform === 'linux'
const tick = linux ? 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || 100) : 0

/** CPU time of the processes named `postgres` so far, in µs (those that ended meanwhile are not counted); null off Linux or with none. */
export function postgresCpuMicros () {
  if (!linux) return null
  let total = 0
  let found = false
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    let stat
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue // ended between the listing and the read
    }
    const close = stat.lastIndexOf(')')
    if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') continue
    // After the command come state, ppid… utime and stime are the 12th and 13th of those.
    const fields = stat.slice(close + 2).split(' ')
    total += (Number(fields[11]) + Number(fields[12])) * tick
    found = true
  }
  return found ? total : null
}

/** CPU time the machine's cores have spent running anything so far, in µs; null off Linux. */
export function machineBusyMicros () {
  if (!linux) return null
  // user, nice, system, idle, iowait, irq, softirq, steal…: idle, iowait and the time a
  // hypervisor took (steal) are no work of this machine's.
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
  return (user + nice + system + irq + softirq) * tick
}
