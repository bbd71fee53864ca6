// The conventions of the `linkplane` command, over the real process: help on stdout with exit 0 (general, per command,
// per group of commands), --version from package.json, a one-line error and a hint with exit 2 for every mistake on
// the command line, and a sentence with exit 1 when what it talks to cannot be reached.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ROOT } from '../helpers/processes.ts';
import { COMMANDS } from '../../src/cli/commands.ts';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, ['bin/linkplane.js', ...args], { cwd: ROOT, env: { ...process.env, LINKPLANE_API_KEY: '', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** A usage mistake: nothing on stdout, exit 2, on stderr one line saying what is wrong and one pointing to the help. */
function expectUsageError(run: Run, says: RegExp, hint: string): void {
  expect(run.code, run.stderr).to.equal(2);
  expect(run.stdout).to.equal('');
  const lines = run.stderr.trimEnd().split('\n');
  expect(lines, run.stderr).to.have.length(2);
  expect(lines[0]).to.match(/^linkplane: /).and.to.match(says);
  expect(lines[1]).to.equal(hint);
}

describe('linkplane CLI conventions', function () {
  this.timeout(180_000);

  it('prints the general help on stdout with exit 0 for --help, -h and help', async () => {
    const runs = await Promise.all([cli(['--help']), cli(['-h']), cli(['help'])]);
    for (const run of runs) {
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stderr).to.equal('');
      expect(run.stdout).to.equal(runs[0].stdout);
    }
    expect(runs[0].stdout).to.match(/^linkplane: /).and.to.include('Usage: linkplane <command> [flags]').and.to.include('--version');
    for (const command of COMMANDS) expect(runs[0].stdout).to.match(new RegExp(`\\n  ${command.name} +\\S`));
  });

  it('prints every command\'s own help (usage, flags, examples) for `help <command>` and `<command> --help`', async () => {
    for (const command of COMMANDS) {
      const run = await cli([...command.name.split(' '), '--help']);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stderr).to.equal('');
      expect(run.stdout).to.match(new RegExp(`^Usage: linkplane ${command.name}`));
      expect(run.stdout).to.include('Examples:\n  linkplane ');
      for (const [flag] of command.flags) expect(run.stdout, command.name).to.include(`\n  ${flag} `);
    }
    // `help <command>` prints the same text.
    for (const words of [['key', 'create'], ['import'], ['export']]) {
      const [viaHelp, viaFlag] = await Promise.all([cli(['help', ...words]), cli([...words, '--help'])]);
      expect(viaHelp.code, viaHelp.stderr).to.equal(0);
      expect(viaHelp.stdout).to.equal(viaFlag.stdout);
    }
    const exportHelp = await cli(['export', '--help']);
    expect(exportHelp.stdout).to.include('--format F').and.to.include('--output FILE').and.to.include('LINKPLANE_API_KEY');
  });

  it('lists the commands of a group for `help key` and `key --help`', async () => {
    const [viaHelp, viaFlag] = await Promise.all([cli(['help', 'key']), cli(['key', '--help'])]);
    expect(viaHelp.code).to.equal(0);
    expect(viaFlag.stdout).to.equal(viaHelp.stdout);
    for (const name of ['key create', 'key list', 'key revoke', 'key scopes']) expect(viaHelp.stdout).to.include(`  ${name} `);
  });

  it("prints the package's version for --version and -v", async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const run = await cli([flag]);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal(`${version}\n`);
      expect(run.stderr).to.equal('');
    }
  });

  it('answers each mistake on the command line with one line, a hint and exit 2, never a JSON dump', async () => {
    const [unknown, unknownVerb, bareGroup, badFlag, foreignFlag, noValue, extra, noHelp, badFormat, noSource, none] = await Promise.all([
      cli(['frobnicate']),
      cli(['key', 'frob']),
      cli(['key']),
      cli(['plans', '--frob']),
      cli(['plans', '--workspace', 'ws_1']),
      cli(['workspace', 'create', '--name']),
      cli(['plans', 'extra']),
      cli(['help', 'nope']),
      cli(['export', '--format', 'xml']),
      cli(['import']),
      cli([]),
    ]);
    expectUsageError(unknown, /unknown command "frobnicate"/, 'Run `linkplane help` to see the commands.');
    expectUsageError(unknownVerb, /unknown command "key frob"/, 'Run `linkplane help key` to see them.');
    expectUsageError(bareGroup, /missing a command after "key"/, 'Run `linkplane help key` to see them.');
    expectUsageError(badFlag, /unknown flag --frob/, 'Run `linkplane plans --help` for its usage.');
    expectUsageError(foreignFlag, /`linkplane plans` takes no --workspace flag/, 'Run `linkplane plans --help` for its usage.');
    expectUsageError(noValue, /--name <value>' argument missing/, 'Run `linkplane workspace create --help` for its usage.');
    expectUsageError(extra, /unexpected argument "extra"/, 'Run `linkplane plans --help` for its usage.');
    expectUsageError(noHelp, /no help for "nope"/, 'Run `linkplane help` to see the commands.');
    expectUsageError(badFormat, /--format must be csv or jsonl, not "xml"/, 'Run `linkplane export --help` for its usage.');
    expectUsageError(noSource, /missing <source>/, 'Run `linkplane import --help` for its usage.');
    expectUsageError(none, /missing <command>/, 'Run `linkplane help` to see the commands.');
    // Checked before the database is reached: this one is not.
    const noName = await cli(['workspace', 'create', '--plan', 'pro'], { MONGODB_URI: 'mongodb://127.0.0.1:9/?directConnection=true' });
    expectUsageError(noName, /^linkplane: missing --name$/, 'Run `linkplane workspace create --help` for its usage.');
    const noKey = await cli(['export']);
    expectUsageError(noKey, /LINKPLANE_API_KEY must hold an API key with links:read/, 'Run `linkplane export --help` for its usage.');
  });

  it('says in a sentence, with exit 1, that the API cannot be reached', async () => {
    // A port that was just free: nothing listens on it.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    const run = await cli(['export'], { LINKPLANE_API_URL: `http://127.0.0.1:${port}`, LINKPLANE_API_KEY: 'lp_live_x' });
    expect(run.code, run.stderr).to.equal(1);
    expect(run.stdout).to.equal('');
    expect(run.stderr).to.match(new RegExp(`^linkplane: cannot reach the Linkplane API at http://127\\.0\\.0\\.1:${port} \\(is it running, or LINKPLANE_API_URL set\\?\\): .*ECONNREFUSED`));
    expect(run.stderr).not.to.include('{');
  });
});
