/**
 * A small bounded memo for pure checks of header values: clients repeat the same
 * User-Agent and Accept on every request, so each distinct value is parsed once.
 * When full it starts over, which keeps it bounded against random values.
 */
export class Memo<V> {
  readonly #map = new Map<string, V>()
  readonly #max: number

  constructor (max = 256) {
    this.#max = max
  }

  get (key: string, compute: (key: string) => V): V {
    let value = this.#map.get(key)
    if (value === undefined && !this.#map.has(key)) {
      value = compute(key)
      if (this.#map.size >= this.#max) this.#map.clear()
      this.#map.set(key, value)
    }
    return value as V
  }
}
