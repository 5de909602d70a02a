// Helpers the templates write code with, so that one template gives TypeScript or JavaScript,
// ES modules or CommonJS. TypeScript is always written with import/export: tsx runs it as
// CommonJS where package.json says so.

/** `text` in TypeScript, nothing in JavaScript (type annotations). */
export function ts (ctx, text) {
  return ctx.typescript ? text : ''
}

/** `text` in JavaScript, nothing in TypeScript (JSDoc that says what TypeScript's types do). */
export function js (ctx, text) {
  return ctx.typescript ? '' : text
}

/** `export ` where the file is a module written with export, else nothing (module.exports at the end). */
export function exp (ctx) {
  return ctx.typescript || ctx.esm ? 'export ' : ''
}

/** The CommonJS JavaScript file's exports, as its last line; nothing elsewhere. */
export function exportsLine (ctx, names) {
  return ctx.typescript || ctx.esm ? '' : `\nmodule.exports = { ${names.join(', ')} }\n`
}

/**
 * An import: `{ def, names, types }` from `from`. Types are imported in TypeScript only; in
 * CommonJS JavaScript the names come from require(), which loads the suite's ES modules on the
 * supported Node.js versions.
 */
export function imp (ctx, from, { def, names = [], types = [] }) {
  if (ctx.typescript) {
    const named = [...names, ...types.map(t => `type ${t}`)]
    if (def === undefined && names.length === 0) return `import type { ${types.join(', ')} } from '${from}'\n`
    const parts = [def, named.length > 0 ? `{ ${named.join(', ')} }` : undefined].filter(p => p !== undefined)
    return `import ${parts.join(', ')} from '${from}'\n`
  }
  if (def === undefined && names.length === 0) return ''
  if (ctx.esm) {
    const parts = [def, names.length > 0 ? `{ ${names.join(', ')} }` : undefined].filter(p => p !== undefined)
    return `import ${parts.join(', ')} from '${from}'\n`
  }
  const lines = []
  if (def !== undefined) lines.push(`const ${def} = require('${from}')`)
  if (names.length > 0) lines.push(`const { ${names.join(', ')} } = require('${from}')`)
  return lines.join('\n') + '\n'
}

/** A JSON literal written as JavaScript source: keys bare where they can be. */
export function literal (value, indent = '') {
  if (Array.isArray(value)) return `[${value.map(v => literal(v, indent)).join(', ')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : `'${k}'`}: ${literal(v, indent)}`)
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`
  }
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(value)
}

/** `word` after its indefinite article: `a book`, `an order`. */
export function withArticle (word) {
  return `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`
}
