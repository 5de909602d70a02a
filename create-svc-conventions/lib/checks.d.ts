export declare const SUPPORTED_NODE: string
export declare function nodeSupported (version: string): boolean
export declare function unsupportedNode (version: string): string | null
export declare function nameProblems (name: string): string[]
export declare function occupants (dir: string): string[]
