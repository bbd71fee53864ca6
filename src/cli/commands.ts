// The commands of `linkplane`, with what `linkplane help <command>` prints for each: usage, flags, examples. The
// table also says which flags a command takes, so that a flag given to the wrong command is refused.
import { SOURCE_KINDS } from '../imports/source.ts';

export interface CommandHelp {
  /** The words that name it: `key create`, `plans`. */
  name: string;
  /** Its arguments and flags, after `linkplane <name>`. */
  synopsis: string;
  summary: string;
  /** The flags it takes, each with what it means. */
  flags: Array<[flag: string, meaning: string]>;
  /** Positional arguments after the name (`key revoke ID`, `import <source>`). */
  args: number;
  examples: string[];
  /** Where it works: the database, the API (with LINKPLANE_API_KEY or a saved profile), or nothing. */
  env: 'db' | 'api' | 'none';
  /** Flags it cannot run without, checked before anything is reached. */
  required?: string[];
}

export const COMMANDS: CommandHelp[] = [
  {
    name: 'workspace create',
    synopsis: '--name N [--plan free|pro|business|enterprise] [--partner ID] [--email ADDR]',
    summary: 'create a workspace',
    flags: [
      ['--name N', 'its name (required)'],
      ['--plan P', 'free, pro, business or enterprise (see `linkplane plans`)'],
      ['--partner ID', 'the partner it is a client of'],
      ["--email ADDR", "the owner's address, e-mailed when a webhook endpoint turns failing"],
    ],
    args: 0,
    examples: ['linkplane workspace create --name Acme --plan pro', 'linkplane workspace create --name Client --partner ptr_… --email owner@client.example'],
    env: 'db',
    required: ['name'],
  },
  {
    name: 'partner create',
    synopsis: '--name N [--email ADDR]',
    summary: 'create a partner (an agency or reseller with client workspaces)',
    flags: [
      ['--name N', 'its name (required)'],
      ["--email ADDR", "the owner's address, e-mailed when a webhook endpoint turns failing"],
    ],
    args: 0,
    examples: ['linkplane partner create --name Agency --email ops@agency.example'],
    env: 'db',
    required: ['name'],
  },
  {
    name: 'user create',
    synopsis: '--email ADDR [--name N] [--password P] [--workspace ID] [--partner ID] [--role owner|member]',
    summary: 'create a dashboard account, a member of the workspace and/or partner named',
    flags: [
      ['--email ADDR', 'the sign-in address (required)'],
      ['--name N', 'the display name'],
      ['--password P', 'the password; without it one is generated and shown once'],
      ['--workspace ID', 'make the user a member of this workspace'],
      ['--partner ID', 'make the user a member of this partner'],
      ['--role R', 'owner (default) or member'],
    ],
    args: 0,
    examples: ['linkplane user create --email ada@acme.example --workspace ws_…', 'linkplane user create --email bob@acme.example --workspace ws_… --role member --password "a long passphrase"'],
    env: 'db',
    required: ['email'],
  },
  {
    name: 'key create',
    synopsis: '(--workspace ID | --partner ID) --scopes LIST|all [--expires-at ISO] [--name N]',
    summary: 'create an API key (the key is printed once)',
    flags: [
      ['--workspace ID', 'a workspace key (lp_live_…); exactly one of --workspace and --partner'],
      ['--partner ID', 'a partner key (lpp_live_…)'],
      ['--scopes LIST', 'comma-separated scopes, or all (see `linkplane key scopes`); required'],
      ['--expires-at ISO', 'when the key stops working (ISO 8601)'],
      ['--name N', 'a name to recognise it by'],
    ],
    args: 0,
    examples: ['linkplane key create --workspace ws_… --scopes links:read,links:write --name ci', 'linkplane key create --partner ptr_… --scopes all --expires-at 2027-01-01T00:00:00Z'],
    env: 'db',
    required: ['scopes'],
  },
  {
    name: 'key list',
    synopsis: '[--workspace ID | --partner ID]',
    summary: 'list API keys (never the keys themselves)',
    flags: [
      ['--workspace ID', "only this workspace's keys"],
      ['--partner ID', "only this partner's keys"],
    ],
    args: 0,
    examples: ['linkplane key list', 'linkplane key list --workspace ws_…'],
    env: 'db',
  },
  {
    name: 'key revoke',
    synopsis: 'ID',
    summary: 'revoke an API key, and tell running processes over NATS to drop it now',
    flags: [],
    args: 1,
    examples: ['linkplane key revoke key_…'],
    env: 'db',
  },
  { name: 'key scopes', synopsis: '', summary: 'every scope name, by area', flags: [], args: 0, examples: ['linkplane key scopes'], env: 'none' },
  { name: 'plans', synopsis: '', summary: 'the plans, their limits and capabilities', flags: [], args: 0, examples: ['linkplane plans'], env: 'none' },
  {
    name: 'analytics rebuild',
    synopsis: '[--workspace ID] [--full]',
    summary: 'roll up raw clicks not yet in the analytics rollups (idempotent; safe while workers run)',
    flags: [
      ['--workspace ID', 'only this workspace'],
      ['--full', 'first empty the rollups and recount every raw click still kept (stop the workers first)'],
    ],
    args: 0,
    examples: ['linkplane analytics rebuild', 'linkplane analytics rebuild --workspace ws_… --full'],
    env: 'db',
  },
  {
    name: 'login',
    synopsis: '[--api-url URL] [--profile NAME]',
    summary: 'save an API URL and key as a profile for the API commands (the key is read from a prompt or stdin)',
    flags: [
      ['--api-url URL', "the Linkplane API's origin (default LINKPLANE_API_URL, else http://127.0.0.1:8080)"],
      ['--profile NAME', 'the profile to save (default: default); several may be kept'],
    ],
    args: 0,
    examples: ['linkplane login --api-url https://api.example.com', 'printf %s "$KEY" | linkplane login --profile staging --api-url https://api.staging.example.com'],
    env: 'api',
  },
  {
    name: 'logout',
    synopsis: '[--profile NAME]',
    summary: 'remove a saved profile (the key itself stays valid until revoked)',
    flags: [['--profile NAME', 'the profile to remove (default: default)']],
    args: 0,
    examples: ['linkplane logout', 'linkplane logout --profile staging'],
    env: 'api',
  },
  { name: 'profile list', synopsis: '', summary: 'the saved profiles (never their keys)', flags: [], args: 0, examples: ['linkplane profile list', 'linkplane profile list --json'], env: 'api' },
  {
    name: 'links create',
    synopsis: '--url URL [--slug S] [--title T] [--domain-id ID] [--profile NAME]',
    summary: 'create a short link through the API',
    flags: [
      ['--url URL', 'the destination (required)'],
      ['--slug S', 'the path of the short link (default: generated)'],
      ['--title T', 'a title to recognise it by'],
      ['--domain-id ID', 'a custom domain of the workspace (default: the default domain)'],
      ['--profile NAME', 'the saved profile to use'],
    ],
    args: 0,
    examples: ['linkplane links create --url https://example.com/launch', 'linkplane links create --url https://example.com --slug spring --json'],
    env: 'api',
    required: ['url'],
  },
  {
    name: 'links list',
    synopsis: '[--limit N] [--all] [--search Q] [--profile NAME]',
    summary: 'the newest links of the workspace, or all of them',
    flags: [
      ['--limit N', 'how many (1 to 100, default 20); with --all, the size of each page fetched'],
      ['--all', 'every link, page after page'],
      ['--search Q', 'only links whose slug, destination, title or note contains Q (any case)'],
      ['--profile NAME', 'the saved profile to use'],
    ],
    args: 0,
    examples: ['linkplane links list', 'linkplane links list --all --json > links.json'],
    env: 'api',
  },
  {
    name: 'links get',
    synopsis: 'ID [--profile NAME]',
    summary: 'one link',
    flags: [['--profile NAME', 'the saved profile to use']],
    args: 1,
    examples: ['linkplane links get lnk_…', 'linkplane links get lnk_… --json'],
    env: 'api',
  },
  {
    name: 'analytics summary',
    synopsis: '[--link ID] [--interval 24h|7d|30d|90d|12mo|all | --start ISO --end ISO] [--timezone TZ] [--profile NAME]',
    summary: 'clicks, unique visitors, conversions and revenue of a range, with the period before',
    flags: [
      ['--link ID', 'only this link'],
      ['--interval I', '24h, 7d, 30d (default), 90d, 12mo or all'],
      ['--start ISO', 'range start (with --end, instead of --interval)'],
      ['--end ISO', 'range end, exclusive'],
      ['--timezone TZ', "an IANA time zone (default the workspace's)"],
      ['--profile NAME', 'the saved profile to use'],
    ],
    args: 0,
    examples: ['linkplane analytics summary --interval 7d', 'linkplane analytics summary --link lnk_… --json'],
    env: 'api',
  },
  {
    name: 'import',
    synopsis: '<source> [--token T] [--base-url URL] [--file PATH] [--param NAME=VALUE ...] [--dry-run] [--domains create|default] [--on-slug-clash error|suffix] [--no-wait]',
    summary: `import links from another service through the API (${SOURCE_KINDS.join(', ')})`,
    flags: [
      ['--token T', "the source's API token"],
      ['--base-url URL', 'a self-hosted source (Shlink, Kutt, YOURLS)'],
      ['--file PATH', 'an export file of the source instead of its API'],
      ['--param NAME=VALUE', 'a source-specific setting (repeatable)'],
      ['--dry-run', 'report what would be created and what would fail, writing nothing'],
      ['--domains D', 'create (default: missing domains are created, unverified) or default (use the default domain)'],
      ['--on-slug-clash C', 'error (default: the row fails) or suffix (a free slug is chosen)'],
      ['--no-wait', 'start the job and print it, without following it'],
      ['--profile NAME', 'the saved profile to use'],
    ],
    args: 1,
    examples: ['linkplane import bitly --token "$BITLY_TOKEN"', 'linkplane import shlink --base-url https://s.example.com --token "$SHLINK_KEY" --dry-run', 'linkplane import csv --file links.csv'],
    env: 'api',
  },
  {
    name: 'export',
    synopsis: '[--format csv|jsonl] [--output FILE]',
    summary: 'every link of the workspace, streamed as CSV or JSON Lines through the API',
    flags: [
      ['--format F', 'csv (default) or jsonl (lossless, one link a line)'],
      ['--output FILE', 'write to FILE instead of stdout (nothing is left behind if the API refuses)'],
      ['--profile NAME', 'the saved profile to use'],
    ],
    args: 0,
    examples: ['linkplane export --format jsonl > links.jsonl', 'linkplane export --output links.csv'],
    env: 'api',
  },
];

const DB_ENV =
  'Environment: MONGODB_URI (default mongodb://127.0.0.1:27017/?directConnection=true), MONGODB_DB (linkplane),\n' +
  'NATS_URL (nats://127.0.0.1:4222) and NATS_PREFIX, to broadcast a revocation to running processes.';
const API_ENV =
  'API: the profile named by --profile or LINKPLANE_PROFILE (saved by `linkplane login`); else LINKPLANE_API_KEY with\n' +
  'LINKPLANE_API_URL (default http://127.0.0.1:8080); else the profile "default". Profiles are kept in\n' +
  '$XDG_CONFIG_HOME/linkplane/config.json (default ~/.config/linkplane/config.json), readable by you only.';

export function findCommand(positionals: string[]): CommandHelp | undefined {
  const [noun, verb] = positionals;
  return COMMANDS.find((c) => c.name === `${noun} ${verb ?? ''}`.trim()) ?? COMMANDS.find((c) => c.name === noun);
}

/** The commands under a noun (`key` → key create, list, revoke, scopes). */
export function commandsUnder(noun: string): CommandHelp[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${noun} `));
}

/** The long name of each flag a command takes (`name` for `--name N`). */
export function flagNames(command: CommandHelp): string[] {
  return command.flags.map(([flag]) => flag.slice(2).split(' ')[0]!);
}

const pad = (rows: Array<[string, string]>): string => {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`).join('\n');
};

export function generalHelp(): string {
  return `linkplane: administer a Linkplane (tenancy, keys, analytics) against its database, and work with a running
Linkplane through its API (links, analytics, imports and exports) with a saved profile. The database commands print
JSON; the API commands print text for people, or JSON with --json; export prints the file itself.

Usage: linkplane <command> [flags]

Commands:
${pad(COMMANDS.map((c) => [c.name, c.summary]))}

Flags:
${pad([
  ['-h, --help', 'help for linkplane or a command'],
  ['--json', 'print the answer as JSON (the API commands; the others always do)'],
  ['-v, --version', 'the version of linkplane'],
])}

Run \`linkplane help <command>\` (or \`linkplane <command> --help\`) for a command's flags and examples.

${DB_ENV}
${API_ENV}
Exit codes: 0 done, 1 a failure (refused by the database or the API, unreachable), 2 a mistake on the command line.`;
}

export function commandHelp(command: CommandHelp): string {
  const parts = [`Usage: linkplane ${command.name}${command.synopsis ? ` ${command.synopsis}` : ''}`, '', `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`];
  if (command.flags.length > 0) parts.push('', 'Flags:', pad(command.flags));
  parts.push('', 'Examples:', command.examples.map((e) => `  ${e}`).join('\n'));
  if (command.env === 'db') parts.push('', DB_ENV);
  if (command.env === 'api') parts.push('', API_ENV);
  return parts.join('\n');
}

export function groupHelp(noun: string, commands: CommandHelp[]): string {
  return `Usage: linkplane ${noun} <command> [flags]

Commands:
${pad(commands.map((c) => [c.name, c.summary]))}

Run \`linkplane help ${noun} <command>\` for a command's flags and examples.`;
}
