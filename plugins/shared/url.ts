/** The path of a request URL, without its query string. */
export function pathOf (url: string): string {
  const i = url.indexOf('?')
  return i === -1 ? url : url.slice(0, i)
}
