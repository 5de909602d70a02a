import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**', 'bench/tmp/**', 'examples/client/reference-api.d.ts'] }),
  {
    rules: {
      // `const X = Type.Object(...)` beside `type X = Static<typeof X>` is the TypeBox idiom.
      '@typescript-eslint/no-redeclare': 'off'
    }
  }
]
