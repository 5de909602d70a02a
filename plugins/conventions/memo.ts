/**
 * A small bounded memo for pure checks of header values: clients repeat the same
 * User-Agent and Accept on every request, so each distinct value is parsed once.
 * When full it starts over, which keeps it bounded against random values.
 */
export class Memo<V> {
  readonly #map = new Map<string, V>()
  readonly #compute: (key: string) => V
  readonly #max: number
  // The last value asked for, answered without a map lookup: a client sends the same
  // value on every request, and it stays answered when the map starts over.
  #lastKey: string | undefined = undefined
  #lastValue: V | undefined = undefined

  constructor (compute: (key: string) => V, max = 256) {
    this.#compute = compute
    this.#max = max
  }

  get (key: string): V {
    if (key === this.#lastKey) return this.#lastValue as V
    let value = this.#map.get(key)
    if (value === undefined && !this.#map.has(key)) {
      value = this.#compute(key)
      if (this.#map.size >= this.#max) this.#map.clear()
      this.#map.set(key, value)
    }
    this.#lastKey = key
    this.#lastValue = value
    return value as V
  }
}
