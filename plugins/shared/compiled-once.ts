/**
 * Compiling a schema (a validator, a serializer) is the costly part of a start, and routes
 * repeat schemas: each distinct text is compiled once, and its function serves every route
 * that asks for it. The functions kept are stateless between calls (Ajv's `errors` is read
 * right after the call that set it), so sharing one is safe.
 */
export function compiledOnce<F> (compile: (schema: object) => F): (schema: object) => F {
  const compiled = new Map<string, F>()
  return (schema) => {
    const text = JSON.stringify(schema)
    let fn = compiled.get(text)
    if (fn === undefined) {
      fn = compile(schema)
      compiled.set(text, fn)
    }
    return fn
  }
}
