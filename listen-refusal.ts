/**
 * Why the service could not listen, in the words of the variables that say where (HOST,
 * PORT): Node's own message names an address, not what to change. Errors of any other kind
 * come back as they are.
 */
export function listenRefusal (err: unknown, host: string, port: number): unknown {
  const e = err as NodeJS.ErrnoException | null
  const at = `${host}:${port}`
  switch (e?.code) {
    case 'EADDRINUSE':
      return new Error(`PORT=${port}: another process already listens on ${at}; set PORT to a free port (0 takes any)`, { cause: err })
    case 'EACCES':
      return new Error(`PORT=${port}: this process may not listen on ${at} (ports below 1024 need privileges); set PORT to 1024 or above`, { cause: err })
    case 'EADDRNOTAVAIL':
      return new Error(`HOST=${host}: no network interface of this machine has that address; set HOST to one that has (0.0.0.0 for all)`, { cause: err })
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new Error(`HOST=${host}: the name does not resolve to an address (${e.code}); set HOST to an address or a name this machine resolves`, { cause: err })
    default:
      return err
  }
}
