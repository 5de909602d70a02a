import type { Resource } from '../lib/fields.js'
export interface TemplateContext { name?: string, typescript: boolean, esm: boolean, resource?: Resource }
export declare function resource (ctx: TemplateContext & { resource: Resource }): string
export declare function resourceIndex (ctx: TemplateContext & { resource: Resource }): string
