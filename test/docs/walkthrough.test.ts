import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { SECRET } from '../resource/helper.js'
import { startService } from '../service/service.js'

// docs/walkthrough.md runs as written: its bash blocks, in order, against a started service;
// each block's HTTP answers are the statuses its "Answer:" paragraph names, in that order.
const root = join(import.meta.dirname, '..', '..')
// The tests' own TypeScript loader (types erased): the children's coverage maps like the tests'.
const loader = join(root, 'scripts', 'strip-types.js')

interface Step { line: number, code: string, statuses: number[] }

/** The ```sh blocks of the page, each with the statuses of the answer paragraph after it (none for a set-up block). */
export function steps (markdown: string): Step[] {
  const lines = markdown.split('\n')
  const found: Step[] = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```sh') continue
    const end = lines.indexOf('```', i + 1)
    const code = lines.slice(i + 1, end).join('\n')
    let j = end + 1
    while (j < lines.length && lines[j] === '') j++
    const paragraph: string[] = []
    for (; j < lines.length && lines[j] !== '' && lines[j] !== '```sh'; j++) paragraph.push(lines[j] as string)
    const text = paragraph.join(' ')
    const statuses = text.startsWith('Answer:') ? [...text.matchAll(/\*\*(\d{3}) [^*]+\*\*/g)].map(m => Number(m[1])) : []
    found.push({ line: i + 1, code, statuses })
    i = end
  }
  return found
}

t.test('the steps are read from the page', async t => {
  const md = 'x\n```sh\nsetup\n```\n\n```sh\ncurl a\ncurl b\n```\n\nAnswer: **201 Created**, then **409 Conflict**: no.\n'
  t.strictSame(steps(md), [{ line: 2, code: 'setup', statuses: [] }, { line: 6, code: 'curl a\ncurl b', statuses: [201, 409] }])
})

t.test('every command of docs/walkthrough.md answers as the page says', async t => {
  const { base } = await startService(t)
  const dir = mkdtempSync(join(tmpdir(), 'svc-walkthrough-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  // `npm run --silent token -- …` runs the same command from the sources: no build needed here.
  writeFileSync(join(dir, 'npm'), [
    '#!/bin/sh',
    '[ "$1 $2 $3 $4" = "run --silent token --" ] || { echo "npm stand-in: unexpected $*" >&2; exit 2; }',
    'shift 4',
    `exec "${process.execPath}" --conditions=svc-conventions-source --import "${loader}" "${join(root, 'bin', 'token.ts')}" "$@"`
  ].join('\n') + '\n')
  chmodSync(join(dir, 'npm'), 0o755)

  const page = steps(readFileSync(join(root, 'docs', 'walkthrough.md'), 'utf8'))
  t.ok(page.filter(s => s.statuses.length > 0).length >= 20, 'the page has its steps')
  const script = page.map((s, i) => `${s.code}\nprintf "\\n@@step ${i}\\n"`).join('\n')
  const child = spawn('bash', ['-c', script], {
    cwd: dir,
    env: { ...process.env, BASE: base, AUTH_JWT_SECRET: SECRET, PATH: `${dir}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => { out += String(chunk) })
  child.stderr.on('data', (chunk: Buffer) => { err += String(chunk) })
  await new Promise(resolve => child.on('close', resolve))
  t.strictSame(readdirSync(dir).sort(), ['npm'], 'the steps leave no file behind in the folder they run in')
  const outputs = out.split(/^@@step \d+$/m)
  // What the page says of some answers' bodies, beyond their statuses.
  const claims: Array<[string, RegExp, string]> = [
    ['filter=pageCount=ge=100', /"name":"The Dispossessed".*"name":"The Lathe of Heaven"|"name":"The Lathe of Heaven".*"name":"The Dispossessed"/s, 'the FIQL filter finds the two long ones'],
    ['totalCount=true', /"totalCount":3/, 'the total'],
    ['/publish', /"status":"PUBLISHED".*"publishedDateTime":"\d{4}-.*INVALID_STATE_TRANSITION/s, 'published by the action, then refused from PUBLISHED'],
    ['transactionMode', /"status":"PARTIAL".*UNIQUE_NAME_VIOLATION/s, 'a partial bulk, the taken name failing'],
    ['x-request-id: walkthrough-404', /"requestId":"walkthrough-404"/, 'the request id in the problem']
  ]
  for (const [marker, pattern, name] of claims) {
    const i = page.findIndex(s => s.code.includes(marker))
    t.match(outputs[i], pattern, name)
  }
  page.forEach((s, i) => {
    const output = outputs[i] ?? ''
    // A body ends without a newline, so the next answer's status line may follow it on the same line.
    const statuses = [...output.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map(m => Number(m[1]))
    t.strictSame(statuses, s.statuses, `docs/walkthrough.md line ${s.line}: ${s.code.split('\n')[0] ?? ''}`, { output: output.slice(0, 2000), stderr: err.slice(0, 1000) })
  })
})
