import app from './app.js'
import config from './config.js'
import readme from './readme.js'
import server from './server.js'
import token from './token.js'
import { gitignore, packageJson, tsconfig } from './project.js'
import { resource, resourceIndex } from './resources.js'
import { configTest, helper, resourceTest } from './tests.js'

/**
 * The files of a new service, `{ path, content }`, for `ctx`: `{ name, typescript, esm, suite,
 * versions, resource }`.
 */
export function projectFiles (ctx) {
  const ext = ctx.typescript ? 'ts' : 'js'
  const files = [
    ['package.json', packageJson(ctx)],
    ['.gitignore', gitignore(ctx)],
    ['README.md', readme(ctx)],
    [`config.${ext}`, config(ctx)],
    [`app.${ext}`, app(ctx)],
    [`server.${ext}`, server(ctx)],
    [`resources/${ctx.resource.collection}.${ext}`, resource(ctx)],
    [`resources/index.${ext}`, resourceIndex(ctx)],
    [`bin/token.${ext}`, token(ctx)],
    [`test/helper.${ext}`, helper(ctx)],
    [`test/${ctx.resource.collection}.test.${ext}`, resourceTest(ctx)],
    [`test/config.test.${ext}`, configTest(ctx)]
  ]
  if (ctx.typescript) files.push(['tsconfig.json', tsconfig(ctx)])
  return files.map(([path, content]) => ({ path, content }))
}
