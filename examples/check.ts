// The convention checked on a running service, as a program (docs/check.md): the verdicts as
// text, and exit code 1 when a rule fails. Run it beside a service on port 3000:
//   SVC_CHECK_TOKEN=$(npm run -s token) npx tsx examples/check.ts
// #region readme-check
import { check, formatText } from 'svc-conventions/check'

const token = process.env.SVC_CHECK_TOKEN
const result = await check({ baseUrl: 'http://127.0.0.1:3000', token, writes: true })
console.log(formatText(result))
process.exitCode = result.verdicts.some(v => v.verdict === 'fail') ? 1 : 0
// #endregion
