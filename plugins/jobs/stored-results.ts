import { randomBytes } from 'node:crypto'

/*
 * Answers that hold jobs' results as they are stored. The route's serializer writes the rest,
 * each result standing in as a placeholder object, and the stored JSON text then takes the
 * placeholder's place: a large bulk's result is megabytes, which parsing and writing again
 * held the event loop for. The placeholder's member name is random, drawn once per process,
 * so no stored value holds it.
 */
const KEY = `svc:result:${randomBytes(16).toString('hex')}`

/** What the serializer is given for a stored `result`: null as null, else the `n`th placeholder. */
export function standIn (result: string | null, n: number): Record<string, number> | null {
  return result === null ? null : { [KEY]: n }
}

/** `text` with the `n`th placeholder replaced by `results[n]`, for each that is not null. */
export function withResults (text: string, results: ReadonlyArray<string | null>): string {
  let out = ''
  let from = 0
  for (let n = 0; n < results.length; n++) {
    const result = results[n]
    if (result == null) continue
    const mark = `{"${KEY}":${n}}`
    const at = text.indexOf(mark, from)
    // Written otherwise, the answer would be broken JSON: a fault, never sent.
    if (at < 0) throw new Error(`jobs: the serializer did not write the placeholder of result ${n}`)
    out += text.slice(from, at) + result
    from = at + mark.length
  }
  return out + text.slice(from)
}
