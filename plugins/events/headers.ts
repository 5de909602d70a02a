/** The service sending events, as `Svc-Service` names it (conventions: "Svc-Service"). */
export interface ServiceIdentity {
  /** A UUID. */
  id: string
  /** `[a-z0-9-]{1,60}`. */
  name: string
}

/** The execution context a request without `Svc-Execution-Context` runs in (conventions). */
export const PRODUCTION = 'prod'
