// `redocly lint` on the OpenAPI document the api serves: an api is started in this process (the development
// database and NATS, as for the tests), its /v1/openapi.json written to a temporary file and linted with the
// rules of redocly.yaml. Exit code: redocly's (non-zero on any error).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMongo } from '../test/helpers/mongo.ts';
import { testEnv } from '../test/helpers/env.ts';
import { startApi } from '../test/helpers/api.ts';

const mongo = await startTestMongo();
const api = await startApi(testEnv(mongo));
const dir = mkdtempSync(join(tmpdir(), 'linkplane-openapi-'));
let status: number;
try {
  const res = await fetch(`${api.url}/v1/openapi.json`);
  if (!res.ok) throw new Error(`GET /v1/openapi.json answered ${res.status}`);
  const file = join(dir, 'openapi.json');
  writeFileSync(file, await res.text());
  const run = spawnSync('redocly', ['lint', file, '--config', 'redocly.yaml', '--format', 'codeframe'], {
    stdio: 'inherit',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  status = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
  await api.stop();
  await mongo.stop();
}
process.exit(status);
