import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chromiumMissing } from '../helpers/browser.ts';
import { ROOT } from '../helpers/processes.ts';

describe('the headless browser the page tests drive', function () {
  this.timeout(120_000);

  it('is installed (Debian package chromium, see the README)', () => {
    const missing = chromiumMissing();
    if (missing) throw new Error(missing);
  });

  it('when missing, is reported as this one failure: the browser suites skip, with no hook errors', () => {
    const run = spawnSync(
      process.execPath,
      ['node_modules/.bin/mocha', 'test/e2e/chromium.test.ts', 'test/e2e/pages-browser.test.ts', 'test/e2e/redirect-browser.test.ts', '--grep', 'when missing, is reported', '--invert', '--reporter', 'dot'],
      { cwd: ROOT, env: { ...process.env, CHROMIUM_PATH: '/nonexistent/chromium' }, encoding: 'utf8' },
    );
    const output = `${run.stdout}${run.stderr}`;
    expect(output).to.match(/\b1 failing\b/);
    expect(output).to.contain('Chromium not found at /nonexistent/chromium: apt-get install chromium');
    expect(output).not.to.match(/TypeError|"before all" hook|"after all" hook/);
  });
});
