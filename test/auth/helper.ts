import { createHmac, generateKeyPairSync, type JsonWebKey } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { createSigner, type Algorithm } from 'fast-jwt'
import problem from '../../plugins/problem/index.js'
import auth, { type AuthPluginOptions } from '../../plugins/auth/index.js'

export const SECRET = 'a-test-secret-that-is-long-enough-for-hs256'

/** An app with the problem and auth plugins and a few routes of each kind. */
export async function build (t: Test, opts: AuthPluginOptions): Promise<FastifyInstance> {
  const app = Fastify()
  await app.register(problem)
  await app.register(auth, opts)
  app.get('/health', { config: { auth: false } }, async (request) => ({ status: 'UP', principal: request.principal }))
  app.get('/me', async (request) => ({ principal: request.principal }))
  app.get('/v1/authors', { config: { auth: { scopes: ['authors:read'] } } }, async (request) => ({ sub: request.principal?.sub }))
  app.post('/v1/authors', { config: { auth: { scopes: ['authors:read', 'authors:write'] } } }, async () => ({ ok: true }))
  app.get('/boom', async () => { throw new Error('late failure') })
  t.teardown(() => app.close())
  return app
}

export function bodyOf (res: { body: string }): Record<string, any> {
  return JSON.parse(res.body)
}

/** A bearer header for an HS256 token with the given claims (exp one minute ahead unless given). */
export function hs256 (claims: Record<string, unknown>, secret = SECRET): string {
  const sign = createSigner({ key: secret, algorithm: 'HS256' })
  return sign({ exp: Math.floor(Date.now() / 1000) + 60, ...claims })
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')

/** A token built by hand: any header, and an HMAC-SHA256 signature with `hmacKey` (or none). */
export function forge (header: Record<string, unknown>, payload: Record<string, unknown>, hmacKey?: string): string {
  const input = `${b64(header)}.${b64(payload)}`
  const signature = hmacKey === undefined ? '' : createHmac('sha256', hmacKey).update(input).digest('base64url')
  return `${input}.${signature}`
}

export interface KeyPair {
  kid: string
  alg: Algorithm
  jwk: JsonWebKey
  publicPem: string
  sign: (claims: Record<string, unknown>) => string
}

/** A key pair made by node:crypto, its public half as a JWK and a signer with its kid. */
export function keyPair (kind: 'rsa' | 'ec', kid: string): KeyPair {
  const { publicKey, privateKey } = kind === 'rsa'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const alg: Algorithm = kind === 'rsa' ? 'RS256' : 'ES256'
  const signer = createSigner({ key: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, algorithm: alg, kid })
  return {
    kid,
    alg,
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' },
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }) as string,
    sign: (claims) => signer({ exp: Math.floor(Date.now() / 1000) + 60, ...claims })
  }
}

export interface JwksServer {
  url: string
  /** The keys served; replace to rotate. */
  keys: JsonWebKey[]
  /** Requests the server has answered. */
  hits: number
  /** When true, requests are accepted but never answered. */
  hang: boolean
  /** Requests left unanswered whose client gave up and closed the connection. */
  abandoned: number
  close: () => Promise<void>
}

/** A JWKS served over HTTP on 127.0.0.1 at /auth/jwks.json. */
export async function jwksServer (t: Test, keys: JsonWebKey[]): Promise<JwksServer> {
  const state: JwksServer = { url: '', keys, hits: 0, hang: false, abandoned: 0, close }
  const server: Server = createServer((req, res) => {
    if (state.hang) {
      res.on('close', () => { if (!res.writableEnded) state.abandoned++ })
      return
    }
    state.hits++
    if (req.url !== '/auth/jwks.json') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}')
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/jwks.json`
  let closed = false
  async function close (): Promise<void> {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t.teardown(close)
  return state
}
