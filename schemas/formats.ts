// PLACEHOLDER: the schema helper replaces this file with the convention's format validators.
import type { Ajv } from 'ajv'

export interface FormatDefinition { validate: (value: string) => boolean, description: string }
export const conventionFormats: Record<string, FormatDefinition> = {}

export function describeFormat (name: string): string {
  return conventionFormats[name]?.description ?? `a valid ${name}`
}

export function addConventionFormats (ajv: Ajv): Ajv {
  for (const [name, def] of Object.entries(conventionFormats)) ajv.addFormat(name, { type: 'string', validate: def.validate })
  return ajv
}
