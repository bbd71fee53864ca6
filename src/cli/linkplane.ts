// `linkplane`: tenancy administration against the same MongoDB as the processes (MONGODB_URI; by default the
// all-in-one's devdb on 127.0.0.1:27017), and links, analytics, import and export through a running Linkplane's API
// with a saved profile (`linkplane login`). The database commands print JSON on stdout; the API commands text for
// people, or JSON with --json. A refusal prints the API's error (the JSON envelope with --json) on stderr and exits
// 1, an unreachable database or API a sentence and exits 1, a mistake on the command line a one-line error and a
// hint and exits 2. `--help`, `help [command]` and `--version` print on stdout and exit 0.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AppError } from '../platform/errors.ts';
import { ApiRefusal, ImportUsageError, runImport } from './import-command.ts';
import { ApiUnreachable } from './api-client.ts';
import { ExportUsageError, runExport } from './export-command.ts';
import { Failure, UsageError, required } from './cli-errors.ts';
import { commandHelp, commandsUnder, findCommand, flagNames, generalHelp, groupHelp, type CommandHelp } from './commands.ts';
import { LinkplaneConnectionError, LinkplaneError } from '../../sdk/src/index.ts';
import { ApiUsageError, analyticsSummary, linksCreate, linksGet, linksList, login, logout, profileList } from './api-commands.ts';
import { ProfileError, credentials } from './profiles.ts';


/** The API's own error envelope, printed as it came. */
class ApiAnswer extends Error {
  readonly body: unknown;
  constructor(body: unknown) {
    super('the API refused the request');
    this.body = body;
  }
}

/** A refusal met by an API command: the envelope as JSON with --json, else a sentence and the failing fields. */
class ApiRefused extends Error {
  readonly error: LinkplaneError;
  readonly json: boolean;
  constructor(error: LinkplaneError, json: boolean) {
    super(error.message);
    this.error = error;
    this.json = json;
  }
}

interface Io {
  out: (value: unknown) => void;
  env: Record<string, string | undefined>;
  /** stdout is a terminal (progress bars) or not (JSON lines). */
  tty?: boolean;
  /** Raw text to stdout (progress). */
  write?: (text: string) => void;
  /** Raw text to stderr, and whether it is a terminal (the export's progress line). */
  writeErr?: (text: string) => void;
  stderrTty?: boolean;
  /** `linkplane login`'s key: from a prompt that does not echo, or piped on stdin. */
  readKey?: () => Promise<string>;
}

/** Flags every command takes. */
const GLOBAL_FLAGS = ['help', 'version', 'json'];

const GLOBAL_HINT = 'Run `linkplane help` to see the commands.';
const hintFor = (command: CommandHelp): string => `Run \`linkplane ${command.name} --help\` for its usage.`;

/** The version of the package this command belongs to, from its package.json (found upwards from this file: src/ or dist/src/). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'linkplane' && pkg.version) return pkg.version;
    } catch {
      // not here: one level up
    }
    const up = dirname(dir);
    if (up === dir) throw new Failure("linkplane's package.json was not found");
    dir = up;
  }
}

/** What the command line asks for, or a UsageError (unknown command or flag, a flag without its value). */
function parseCommandLine(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        partner: { type: 'string' },
        workspace: { type: 'string' },
        scopes: { type: 'string' },
        'expires-at': { type: 'string' },
        email: { type: 'string' },
        password: { type: 'string' },
        role: { type: 'string' },
        full: { type: 'boolean' },
        token: { type: 'string' },
        'base-url': { type: 'string' },
        file: { type: 'string' },
        param: { type: 'string', multiple: true },
        'dry-run': { type: 'boolean' },
        domains: { type: 'string' },
        'on-slug-clash': { type: 'string' },
        'no-wait': { type: 'boolean' },
        format: { type: 'string' },
        output: { type: 'string', short: 'o' },
        json: { type: 'boolean' },
        profile: { type: 'string' },
        'api-url': { type: 'string' },
        url: { type: 'string' },
        slug: { type: 'string' },
        title: { type: 'string' },
        'domain-id': { type: 'string' },
        limit: { type: 'string' },
        all: { type: 'boolean' },
        search: { type: 'string' },
        link: { type: 'string' },
        interval: { type: 'string' },
        start: { type: 'string' },
        end: { type: 'string' },
        timezone: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    // node:util's messages name the flag; the command, when one is recognisable, gives the hint.
    const command = findCommand(argv.filter((a) => !a.startsWith('-')));
    const message = (error as Error).message.replace(/\. To specify a positional argument starting with a '-'.*$/s, '');
    const line = message.split('\n')[0]!.replace(/^Unknown option '(.+)'$/, 'unknown flag $1');
    throw new UsageError(line, command ? hintFor(command) : GLOBAL_HINT);
  }
  return parsed;
}

export async function runCli(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  if (values.version) {
    return show(io, packageVersion());
  }
  if (positionals[0] === 'help' || values.help) {
    const asked = positionals[0] === 'help' ? positionals.slice(1) : positionals;
    return show(io, helpFor(asked));
  }
  if (positionals.length === 0) throw new UsageError('missing <command>', GLOBAL_HINT);
  const command = findCommand(positionals);
  if (!command) {
    const group = commandsUnder(positionals[0]!);
    if (group.length > 0 && positionals[1] === undefined) throw new UsageError(`missing a command after "${positionals[0]}"`, `Run \`linkplane help ${positionals[0]}\` to see them.`);
    const unknown = group.length > 0 ? `${positionals[0]} ${positionals[1]}` : positionals[0];
    throw new UsageError(`unknown command "${unknown}"`, group.length > 0 ? `Run \`linkplane help ${positionals[0]}\` to see them.` : GLOBAL_HINT);
  }
  const allowed = new Set([...flagNames(command), ...GLOBAL_FLAGS]);
  const given = Object.keys(values).filter((flag) => !allowed.has(flag));
  if (given.length > 0) throw new UsageError(`\`linkplane ${command.name}\` takes no --${given[0]} flag`, hintFor(command));
  const missing = (command.required ?? []).find((flag) => values[flag as keyof typeof values] === undefined || values[flag as keyof typeof values] === '');
  if (missing) throw new UsageError(`missing --${missing}`, hintFor(command));
  const extra = positionals.slice(command.name.split(' ').length + command.args);
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}" for \`linkplane ${command.name}\``, hintFor(command));
  try {
    return await runCommand(command, values, positionals, io);
  } catch (error) {
    if (error instanceof UsageError && error.hint === null) error.hint = hintFor(command);
    throw error;
  }
}

/** `linkplane help`, `help <command>`, `help <noun>` (its commands). */
function helpFor(asked: string[]): string {
  if (asked.length === 0) return generalHelp();
  const command = findCommand(asked);
  if (command && asked.length <= command.name.split(' ').length + command.args) return commandHelp(command);
  const group = commandsUnder(asked[0]!);
  if (group.length > 0 && asked.length === 1) return groupHelp(asked[0]!, group);
  throw new UsageError(`no help for "${asked.join(' ')}": no such command`, GLOBAL_HINT);
}

async function runCommand(command: CommandHelp, values: ReturnType<typeof parseCommandLine>['values'], positionals: string[], io: Io): Promise<number> {
  const [noun, verb, arg] = positionals;
  if (noun === 'plans') return print(io, Object.values((await import('../tenancy/plans.ts')).PLANS));
  if (command.env === 'api' && noun !== 'import' && noun !== 'export') return runApiCommand(command, values, arg, io);
  // A saved profile stands for LINKPLANE_API_URL and LINKPLANE_API_KEY (import and export read those).
  if (noun === 'import' || noun === 'export') io = { ...io, env: profileEnv(values.profile, io.env) };
  if (noun === 'key' && verb === 'scopes') {
    const { ALL_SCOPES, SCOPE_AREAS } = await import('../tenancy/scopes.ts');
    return print(io, { scopes: ALL_SCOPES, areas: SCOPE_AREAS });
  }
  if (noun === 'import') {
    // Through the API, not the database: the job is created as any client would, and run by the workers.
    try {
      return await runImport(verb, values, { env: io.env, tty: io.tty ?? false, write: io.write ?? ((text) => process.stdout.write(text)) });
    } catch (error) {
      if (error instanceof ImportUsageError) throw new UsageError(error.message);
      if (error instanceof ApiRefusal) throw new ApiAnswer(error.body);
      if (error instanceof ApiUnreachable) throw new Failure(error.message);
      throw error;
    }
  }
  if (noun === 'export') {
    try {
      return await runExport(values, {
        env: io.env,
        stdout: process.stdout,
        stderrTty: io.stderrTty ?? false,
        writeErr: io.writeErr ?? ((text) => process.stderr.write(text)),
      });
    } catch (error) {
      if (error instanceof ExportUsageError) throw new UsageError(error.message);
      if (error instanceof ApiRefusal) throw new ApiAnswer(error.body);
      if (error instanceof ApiUnreachable) throw new Failure(error.message);
      throw error;
    }
  }

  // The database commands load the database and server modules only now: the API commands start without them.
  const { runDbCommand } = await import('./db-commands.ts');
  return runDbCommand(command, values, arg, io);
}

/** The commands of api-commands.ts, their failures turned into this file's (exit 1 or 2). */
async function runApiCommand(command: CommandHelp, values: ReturnType<typeof parseCommandLine>['values'], arg: string | undefined, io: Io): Promise<number> {
  const apiIo = {
    json: values.json === true,
    env: io.env,
    write: io.write ?? ((text: string) => process.stdout.write(text)),
    readKey: io.readKey ?? (() => Promise.reject(new Failure('no way to read a key here'))),
  };
  try {
    switch (command.name) {
      case 'login': await login(values, apiIo); break;
      case 'logout': logout(values, apiIo); break;
      case 'profile list': profileList(apiIo); break;
      case 'links create': await linksCreate(values, apiIo); break;
      case 'links list': await linksList(values, apiIo); break;
      case 'links get': await linksGet(required(arg, 'ID'), values, apiIo); break;
      case 'analytics summary': await analyticsSummary(values, apiIo); break;
      default: throw new Failure(`\`linkplane ${command.name}\` has no implementation`);
    }
    return 0;
  } catch (error) {
    if (error instanceof ApiUsageError) throw new UsageError(error.message);
    if (error instanceof ProfileError) throw new Failure(error.message);
    if (error instanceof LinkplaneConnectionError) throw new Failure(`${error.message} (is it running, or the profile's API URL right?)`);
    if (error instanceof LinkplaneError) throw new ApiRefused(error as LinkplaneError, apiIo.json);
    throw error;
  }
}

/** The environment import and export run with: the chosen profile's URL and key, when a profile is chosen or saved. */
function profileEnv(profile: string | undefined, env: Record<string, string | undefined>): Record<string, string | undefined> {
  try {
    const { apiUrl, apiKey } = credentials(profile, env);
    return { ...env, LINKPLANE_API_URL: apiUrl, LINKPLANE_API_KEY: apiKey };
  } catch (error) {
    // Nothing saved and no key in the environment: the command says what it needs, as it always did.
    if (error instanceof ProfileError && profile === undefined && !env.LINKPLANE_PROFILE) return env;
    if (error instanceof ProfileError) throw new Failure(error.message);
    throw error;
  }
}

/** Help or the version, asked for: text on stdout. */
function show(io: Io, text: string): number {
  (io.write ?? ((t: string) => process.stdout.write(t)))(`${text}\n`);
  return 0;
}

function print(io: Io, value: unknown): number {
  io.out(value);
  return 0;
}

/**
 * The key for `linkplane login`: on a terminal, typed at a prompt on stderr without echo; piped, the first line of
 * stdin (so it never has to be on the command line, where other users' `ps` would see it).
 */
async function readKey(): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    let text = '';
    for await (const chunk of stdin) text += (chunk as Buffer).toString('utf8');
    return text.split('\n')[0] ?? '';
  }
  process.stderr.write('API key (lp_live_… or lpp_live_…, not shown): ');
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let key = '';
    const done = (): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
    };
    const onData = (data: string): void => {
      for (const ch of data) {
        if (ch === '\r' || ch === '\n') { done(); resolve(key); return; }
        if (ch === '\u0003') { done(); reject(new UsageError('login cancelled')); return; }
        if (ch === '\u007f' || ch === '\b') key = key.slice(0, -1);
        else key += ch;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}

if (import.meta.main) {
  runCli(process.argv.slice(2), {
    out: (v) => console.log(JSON.stringify(v, null, 2)),
    env: process.env,
    tty: process.stdout.isTTY,
    write: (text) => process.stdout.write(text),
    writeErr: (text) => process.stderr.write(text),
    stderrTty: process.stderr.isTTY,
    readKey,
  })
    .then((code) => process.exit(code))
    .catch((error: unknown) => {
      if (error instanceof UsageError) {
        console.error(`linkplane: ${error.message}`);
        if (error.hint) console.error(error.hint);
        process.exit(2);
      }
      if (error instanceof Failure) {
        console.error(`linkplane: ${error.message}`);
        process.exit(1);
      }
      if (error instanceof ApiAnswer) {
        console.error(JSON.stringify(error.body, null, 2));
        process.exit(1);
      }
      if (error instanceof ApiRefused) {
        if (error.json) console.error(JSON.stringify(error.error.body, null, 2));
        else {
          console.error(`linkplane: ${error.error.message} (${error.error.code}, HTTP ${error.error.status})`);
          for (const d of error.error.details) console.error(`  ${d.path}: ${d.message}`);
        }
        process.exit(1);
      }
      const body =
        error instanceof AppError
          ? { error: { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) } }
          : { error: { code: 'internal', message: (error as Error).message } };
      console.error(JSON.stringify(body, null, 2));
      process.exit(1);
    });
}
