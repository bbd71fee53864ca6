import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { freePort, ROOT, waitForHttp } from '../helpers/processes.ts';

const SHUTDOWN_TIMEOUT_MS = 2000;

describe('SIGTERM while nothing reads stdout', function () {
  this.timeout(90_000);
  let mongo: TestMongo;

  before(async () => {
    mongo = await startTestMongo();
  });
  after(async () => {
    await mongo.stop();
  });

  it('exits 0 within SHUTDOWN_TIMEOUT_MS, dropping and counting the log lines it could not write', async () => {
    const port = await freePort();
    const env = testEnv(mongo, { API_PORT: String(port), LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS), LOG_BUFFER_MAX_BYTES: '65536' });
    // The reader stays (the pipe is open) but stops reading: the pipe fills up and every write to it would block.
    const child = spawn(process.execPath, ['src/main/run.ts', 'api'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.pause();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`, null);
      // Request lines until the process reports dropping some: stdout is full and its buffer at its bound.
      const dropped = async () => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return Number(/^linkplane_log_lines_dropped_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0);
      };
      for (let round = 0; round < 100 && (await dropped()) === 0; round++) {
        await Promise.all(Array.from({ length: 200 }, () => fetch(`http://127.0.0.1:${port}/healthz`).then((res) => res.arrayBuffer())));
      }
      expect(await dropped(), 'log lines dropped and counted while stdout is stuck').to.be.greaterThan(0);

      child.kill('SIGTERM');
      // Without a bound on the log sink the process never exits; a forced exit would be code 1.
      const deadline = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), SHUTDOWN_TIMEOUT_MS + 20_000).unref());
      const result = await Promise.race([exited, deadline]);
      expect(result, stderr).to.deep.equal({ code: 0, signal: null });
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      child.stdout.destroy();
    }
  });
});
