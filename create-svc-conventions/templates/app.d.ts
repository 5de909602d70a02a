import type { TemplateContext } from './resources.js'
export default function app (ctx: TemplateContext & { name: string }): string
