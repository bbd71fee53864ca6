// The commands of `linkplane` that work on the database (MONGODB_URI) directly: tenancy, keys, the analytics
// rollups. Loaded by linkplane.ts only when one of them runs, so the API commands start without the server's modules.
import { MongoClient } from 'mongodb';
import { connect } from '@nats-io/transport-node';
import { pino } from 'pino';
import { NotFoundError, ValidationError } from '../platform/errors.ts';
import { isEmail } from '../platform/email.ts';
import { KeyStore, type ApiKeyDoc } from '../tenancy/key.store.ts';
import { KeyService } from '../tenancy/key.service.ts';
import { parseScopeList } from '../tenancy/scopes.ts';
import { WorkspaceStore } from '../tenancy/workspace.store.ts';
import { UsageStore } from '../tenancy/usage.store.ts';
import { WorkspaceService } from '../workspace/workspace.service.ts';
import { PartnerStore } from '../tenancy/partner.store.ts';
import { createPartner } from '../partner/partner.service.ts';
import { Subjects, natsServers } from '../platform/nats.ts';
import { keyInfo } from '../keys/key.routes.ts';
import { ClickStore } from '../clicks/click.store.ts';
import { RollupStore, RollupWriter } from '../analytics/rollup.store.ts';
import { rebuildRollups } from '../analytics/rebuild.ts';
import { UserStore } from '../tenancy/user.store.ts';
import { MembershipStore, type Role } from '../tenancy/membership.store.ts';
import { createUser, generatePassword, grant } from '../users/accounts.ts';
import { Failure, UsageError, required } from './cli-errors.ts';
import type { CommandHelp } from './commands.ts';

export interface DbIo {
  out: (value: unknown) => void;
  env: Record<string, string | undefined>;
}

export type DbValues = Partial<Record<'name' | 'plan' | 'partner' | 'workspace' | 'scopes' | 'expires-at' | 'email' | 'password' | 'role', string>> & { full?: boolean };

export async function runDbCommand(command: CommandHelp, values: DbValues, arg: string | undefined, io: DbIo): Promise<number> {
  const print = (value: unknown): number => {
    io.out(value);
    return 0;
  };
  const uri = io.env.MONGODB_URI || 'mongodb://127.0.0.1:27017/?directConnection=true';
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, appName: 'linkplane-cli' });
  try {
    await client.connect();
  } catch (error) {
    throw new Failure(`cannot reach MongoDB at ${uri} (is \`make run\` running, or MONGODB_URI set?): ${(error as Error).message}`, { cause: error });
  }
  try {
    const db = client.db(io.env.MONGODB_DB || 'linkplane');
    const workspaces = new WorkspaceStore(db);
    const partners = new PartnerStore(db);
    const keyStore = new KeyStore(db);
    const keys = new KeyService({
      keys: keyStore,
      workspaces,
      partners,
      logger: pino({ level: 'silent' }),
      cacheTtlMs: 0,
      defaultRateLimits: { workspacePerMinute: 600, partnerPerMinute: 1200 },
    });
    switch (command.name) {
      case 'workspace create': {
        const service = new WorkspaceService({ workspaces, partners, usage: new UsageStore(db), defaultRatePerMinute: 600 });
        const ws = await service.create({ name: required(values.name, '--name'), planId: values.plan, partnerId: values.partner ?? null, ownerEmail: values.email ?? null });
        return print({ id: ws._id, name: ws.name, plan: ws.plan_id, partner_id: ws.partner_id, owner_email: ws.owner_email ?? null, created_at: ws.created_at });
      }
      case 'partner create': {
        const partner = await createPartner(partners, { name: required(values.name, '--name'), ownerEmail: values.email ?? null });
        return print({ id: partner._id, name: partner.name, owner_email: partner.owner_email ?? null, created_at: partner.created_at });
      }
      case 'user create': {
        const role = (values.role ?? 'owner') as Role;
        if (role !== 'owner' && role !== 'member') throw new UsageError('--role must be owner or member');
        const users = new UserStore(db);
        const memberships = new MembershipStore(db);
        await Promise.all([users.ensureIndexes(), memberships.ensureIndexes()]);
        const email = required(values.email, '--email');
        if (!isEmail(email.trim())) throw new ValidationError([{ path: 'email', message: 'must be an e-mail address (name@example.com)' }]);
        const targets = {
          exists: async (kind: 'workspace' | 'partner', id: string) => (kind === 'workspace' ? await workspaces.findById(id) : await partners.findById(id)) !== null,
        };
        // Checked before the account exists, so a typo in an id leaves nothing behind.
        if (values.workspace && !(await targets.exists('workspace', values.workspace))) throw new NotFoundError('workspace');
        if (values.partner && !(await targets.exists('partner', values.partner))) throw new NotFoundError('partner');
        const password = values.password ?? generatePassword();
        const user = await createUser(users, { email, name: values.name ?? null, password });
        const granted: Array<{ kind: string; id: string; role: Role }> = [];
        for (const [kind, id] of [['workspace', values.workspace], ['partner', values.partner]] as const) {
          if (!id) continue;
          await grant(memberships, targets, { userId: user._id, kind, targetId: id, role });
          granted.push({ kind, id, role });
        }
        return print({
          id: user._id,
          email: user.email,
          name: user.name,
          memberships: granted,
          ...(values.password === undefined ? { password, note: 'The password is shown only now; it is stored as a hash.' } : {}),
        });
      }
      case 'key create': {
        if (Boolean(values.workspace) === Boolean(values.partner)) throw new UsageError('key create needs exactly one of --workspace ID or --partner ID');
        const { scopes, unknown } = parseScopeList(required(values.scopes, '--scopes'));
        if (unknown.length > 0) {
          throw new ValidationError(unknown.map((s) => ({ path: 'scopes', message: `unknown scope "${s}" (see \`linkplane key scopes\`)` })));
        }
        const expiresAt = values['expires-at'] === undefined ? null : parseDate(values['expires-at']);
        const created = await keys.create({
          kind: values.workspace ? 'workspace' : 'partner',
          ownerId: (values.workspace ?? values.partner)!,
          scopes,
          name: values.name ?? null,
          expiresAt,
        });
        return print({ key: created.key, ...view(created.record), note: 'The key is shown only now; it is stored as a hash.' });
      }
      case 'key list': {
        const filter = values.workspace ? { workspace_id: values.workspace } : values.partner ? { partner_id: values.partner } : {};
        return print({ data: (await keyStore.list(filter)).map(view) });
      }
      case 'key revoke': {
        const revoked = await keys.revoke(required(arg, 'ID'), null);
        const broadcast = await broadcastRevocation(io.env, revoked._id);
        return print({ ...view(revoked), broadcast });
      }
      case 'analytics rebuild': {
        const clicks = new ClickStore(db);
        const store = new RollupStore(db);
        await Promise.all([clicks.ensureIndexes(), store.ensureIndexes()]);
        const writer = new RollupWriter({ client, store, clicks: clicks.clicks });
        return print(await rebuildRollups({ db, clicks: clicks.clicks, store, writer, workspaceId: values.workspace ?? null, full: values.full === true }));
      }
      default:
        throw new Failure(`\`linkplane ${command.name}\` has no implementation`);
    }
  } finally {
    await client.close();
  }
}

function view(key: Omit<ApiKeyDoc, 'key_hash'>): Record<string, unknown> {
  return { ...keyInfo(key), revoked_at: key.revoked_at?.toISOString() ?? null };
}

/** Running processes cache keys; this tells every one of them to drop the revoked key now. */
async function broadcastRevocation(env: Record<string, string | undefined>, id: string): Promise<boolean> {
  try {
    const nc = await connect({ servers: natsServers(env.NATS_URL || 'nats://127.0.0.1:4222'), timeout: 2000, name: 'linkplane-cli' });
    nc.publish(new Subjects(env.NATS_PREFIX ?? '').cacheInvalidate, JSON.stringify({ kind: 'api_key', id }));
    await nc.drain();
    return true;
  } catch {
    // Without NATS the running processes notice at their key cache's expiry (KEY_CACHE_TTL_MS, 60 s by default).
    return false;
  }
}

function parseDate(text: string): Date {
  const date = new Date(text);
  if (Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
    throw new ValidationError([{ path: 'expires_at', message: 'must be an ISO 8601 date-time' }]);
  }
  return date;
}
