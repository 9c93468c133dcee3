#!/usr/bin/env node
// Entry for `npx trainpool`: the CLI is built by electron-vite into out/main/cli.js.
const { existsSync } = require('node:fs')
const { join } = require('node:path')
const cli = join(__dirname, '..', 'out', 'main', 'cli.js')
if (!existsSync(cli)) {
  process.stderr.write('trainpool: the CLI is not built yet: run `npm run build` first (or `npm install`, then `npm run build`).\n')
  process.exit(2)
}
require(cli)
