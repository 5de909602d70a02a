import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**', 'bench/tmp/**', 'examples/client/reference-api.d.ts'] }),
  {
    rules: {
      // `const X = Type.Object(...)` beside `type X = Static<typeof X>` is the TypeBox idiom.
      '@typescript-eslint/no-redeclare': 'off'
    }
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // tap's t.same compares loosely: 1 equals '1', null equals undefined. A test of an API holds
      // the types it answers with.
      'no-restricted-syntax': ['error', {
        selector: "CallExpression[callee.property.name='same']",
        message: 't.same compares loosely (1 equals \'1\'): use t.strictSame, or t.match for a pattern.'
      }]
    }
  }
]
