// What the README test compares: the README's ```ts blocks, and the samples the examples
// offer (whole files, and regions between `// #region readme-<name>` and `// #endregion`).

export interface Block {
  /** 1-based line of the opening fence. */
  line: number
  /** The nearest heading above the block, for messages. */
  heading: string
  code: string
}

export interface Region {
  name: string
  code: string
}

const FENCE = /^```(\S*)\s*$/
const REGION = /^(\s*)\/\/ #region (readme-[\w-]+)\s*$/
const END = /^\s*\/\/ #endregion\s*$/

/** The fenced blocks of a Markdown text in the given languages, each with its line and heading. */
export function fencedBlocks (markdown: string, languages: readonly string[] = ['ts', 'typescript']): Block[] {
  const blocks: Block[] = []
  const lines = markdown.split('\n')
  let heading = '(top)'
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.startsWith('#')) heading = line
    const open = FENCE.exec(line)
    if (open === null) continue
    const end = lines.findIndex((l, j) => j > i && l.trimEnd() === '```')
    if (end === -1) throw new Error(`README line ${i + 1}: the fenced block is never closed`)
    if (languages.includes(open[1] as string)) blocks.push({ line: i + 1, heading, code: lines.slice(i + 1, end).join('\n') + '\n' })
    i = end
  }
  return blocks
}

/**
 * The `readme-*` regions of a source file. Regions may nest; marker lines are left out of
 * every region, and each region is dedented by its marker's indentation.
 */
export function regions (source: string, file = 'source'): Region[] {
  const found: Region[] = []
  const open: Array<{ name: string, indent: string, lines: string[] }> = []
  source.split('\n').forEach((line, i) => {
    const start = REGION.exec(line)
    if (start !== null) {
      open.push({ name: start[2] as string, indent: start[1] as string, lines: [] })
      return
    }
    if (END.test(line)) {
      const region = open.pop()
      if (region === undefined) throw new Error(`${file}:${i + 1}: #endregion without #region`)
      found.push({ name: region.name, code: region.lines.join('\n') + '\n' })
      return
    }
    for (const region of open) {
      if (line !== '' && !line.startsWith(region.indent)) throw new Error(`${file}:${i + 1}: a line of ${region.name} is indented less than its #region`)
      region.lines.push(line.slice(region.indent.length))
    }
  })
  const unclosed = open.pop()
  if (unclosed !== undefined) throw new Error(`${file}: ${unclosed.name} has no #endregion`)
  return found
}
