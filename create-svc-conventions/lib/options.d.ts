/** The initializer's one-line usage, and its --help text. */
export declare const USAGE: string
export declare const HELP: string
