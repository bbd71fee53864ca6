// Saved profiles of the API commands, as `gh` and `stripe` keep theirs: each names an API URL and a key, in one file
// readable by its owner only ($XDG_CONFIG_HOME/linkplane/config.json, else ~/.config/linkplane/config.json, mode
// 0600 in a 0700 folder). `linkplane login` writes one; `--profile NAME` (or LINKPLANE_PROFILE) picks one, else the
// profile named `default`. Without a profile chosen by name, LINKPLANE_API_KEY (with LINKPLANE_API_URL) wins over
// the saved default, so CI and scripts work as they did.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { apiBase } from './api-client.ts';

export const DEFAULT_PROFILE = 'default';
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface Profile {
  api_url: string;
  api_key: string;
  /** What the API said of the key at login: its id, kind and owner. */
  key_id: string;
  kind: 'workspace' | 'partner';
  owner_id: string;
  saved_at: string;
}

interface ConfigFile {
  profiles: Record<string, Profile>;
}

/** A profile file that cannot be read or written, or a profile that does not exist: a sentence, exit 1. */
export class ProfileError extends Error {}

export function configFile(env: Record<string, string | undefined>): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'linkplane', 'config.json');
}

export function validProfileName(name: string): boolean {
  return NAME.test(name);
}

export function readProfiles(env: Record<string, string | undefined>): Record<string, Profile> {
  const file = configFile(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ProfileError(`cannot read ${file}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as ConfigFile;
    return typeof parsed.profiles === 'object' && parsed.profiles !== null ? parsed.profiles : {};
  } catch {
    throw new ProfileError(`${file} is not valid JSON; fix or delete it, then run \`linkplane login\` again`);
  }
}

/** Writes the whole file again, atomically (a temporary file renamed over it), readable by its owner only. */
export function writeProfiles(env: Record<string, string | undefined>, profiles: Record<string, Profile>): string {
  const file = configFile(env);
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify({ profiles } satisfies ConfigFile, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, file);
  } catch (error) {
    throw new ProfileError(`cannot write ${file}: ${(error as Error).message}`);
  }
  return file;
}

export interface Credentials {
  apiUrl: string;
  apiKey: string;
  /** The profile they come from, or null for LINKPLANE_API_KEY. */
  profile: string | null;
}

/** The API and key a command talks with: the named profile, else LINKPLANE_API_KEY, else the `default` profile. */
export function credentials(profileFlag: string | undefined, env: Record<string, string | undefined>): Credentials {
  const named = profileFlag ?? (env.LINKPLANE_PROFILE || undefined);
  if (named === undefined && env.LINKPLANE_API_KEY) return { apiUrl: apiBase(env), apiKey: env.LINKPLANE_API_KEY, profile: null };
  const name = named ?? DEFAULT_PROFILE;
  const profile = readProfiles(env)[name];
  if (!profile) {
    throw new ProfileError(
      named === undefined
        ? 'not logged in: run `linkplane login` (or set LINKPLANE_API_KEY)'
        : `no profile "${name}" in ${configFile(env)}: run \`linkplane login --profile ${name}\``,
    );
  }
  return { apiUrl: profile.api_url, apiKey: profile.api_key, profile: name };
}
