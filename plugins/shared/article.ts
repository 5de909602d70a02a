/**
 * `an author`, `a document`: an entity name with its indefinite article, chosen by the first
 * letter (a, e, i, o take `an`; `u` is left to `a`, as in "a user"), near enough for the names
 * of entities in messages and summaries.
 */
export function withArticle (noun: string, capital = false): string {
  const article = /^[aeio]/i.test(noun) ? 'an' : 'a'
  return `${capital ? article.charAt(0).toUpperCase() + article.slice(1) : article} ${noun}`
}
