// A process's log reaches its file as it is written, not at shutdown: the warnings of an outage are visible during
// it, and a process killed outright (SIGKILL, the OOM killer) leaves its last warning behind.
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { OwnNatsServer } from '../helpers/nats-server.ts';
import { freePort, waitForHttp, ROOT } from '../helpers/processes.ts';
import { until } from '../helpers/wait.ts';

describe('log lines of a process killed with SIGKILL', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  const dir = mkdtempSync(join(tmpdir(), 'lp-logs-'));
  const children: ChildProcess[] = [];

  before(async () => {
    mongo = await startTestMongo();
  });

  after(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await mongo.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [name, portVariable] of [['redirect', 'REDIRECT_PORT'], ['worker', 'WORKER_PORT']] as const) {
    it(`are in the ${name}'s log file: the NATS disconnect warning it wrote just before`, async () => {
      const nats = await OwnNatsServer.start();
      try {
        const port = await freePort();
        const file = join(dir, `${name}.log`);
        const fd = openSync(file, 'w');
        const env = testEnv(mongo, { NATS_URL: nats.url, LOG_LEVEL: 'info', [portVariable]: String(port), CLICK_SPOOL_DIR: join(dir, 'spool') });
        const child = spawn(process.execPath, ['src/main/run.ts', name], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
        closeSync(fd);
        children.push(child);
        await waitForHttp(`http://127.0.0.1:${port}/readyz`, null, 60_000);

        await nats.stop();
        // /readyz turns 503 once the process has seen the disconnect, which it logs in the same step.
        await until(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 503 || false, 30_000, 'the process saw NATS go');
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;

        const lines = readFileSync(file, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { level: number; msg: string; process: string });
        expect(lines.some((l) => /listening|running/.test(l.msg)), 'the start-up line, an info line').to.equal(true);
        const warning = lines.find((l) => l.msg === 'nats disconnect');
        expect(warning, readFileSync(file, 'utf8').slice(-2000)).to.deep.include({ level: 40, process: name });
      } finally {
        await nats.destroy();
      }
    });
  }
});
