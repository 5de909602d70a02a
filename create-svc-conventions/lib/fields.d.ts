export interface FieldType { schema: string, builder?: string, example: (name: string) => unknown }
export declare const FIELD_TYPES: Record<string, FieldType>
export declare const STARTER: { collection: string, fields: string[] }
export declare const FIELD_SYNTAX: string
export interface Field { name: string, type: string, optional: boolean }
export interface Resource { collection: string, name: string, idParam: string, fields: Field[] }
export declare function singular (collection: string): string
export declare function parseResource (collection: string, specs: string[]): Resource | { error: string }
export declare function fieldSchema (field: Field): string
export declare function builders (resource: Resource): string[]
export declare function example (resource: Resource): Record<string, unknown>
