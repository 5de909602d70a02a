/** `1 second`, `2 seconds`: a count with its unit, for messages. */
export function plural (n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`
}
