#!/usr/bin/env node
// `npm init svc-conventions <dir>` runs this file (npm's initializer convention: create-<name>).
import { create } from './index.js'

process.exitCode = await create(process.argv.slice(2))
