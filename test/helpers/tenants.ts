import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { KeyStore } from '../../src/tenancy/key.store.ts';
import { KeyService } from '../../src/tenancy/key.service.ts';
import { ALL_SCOPES, type Scope } from '../../src/tenancy/scopes.ts';
import { WorkspaceStore, type WorkspaceDoc } from '../../src/tenancy/workspace.store.ts';
import { PartnerStore } from '../../src/tenancy/partner.store.ts';
import type { PlanLimits } from '../../src/tenancy/plans.ts';
import { newId } from '../../src/platform/ids.ts';
import type { TestMongo } from './mongo.ts';

/** Builders for tenants and keys, written straight to the database the processes under test read. */
export class Tenants {
  readonly client: MongoClient;
  readonly workspaces: WorkspaceStore;
  readonly partners: PartnerStore;
  readonly keyStore: KeyStore;
  readonly keys: KeyService;

  private constructor(client: MongoClient, dbName: string) {
    this.client = client;
    const db = client.db(dbName);
    this.workspaces = new WorkspaceStore(db);
    this.partners = new PartnerStore(db);
    this.keyStore = new KeyStore(db);
    this.keys = new KeyService({
      keys: this.keyStore,
      workspaces: this.workspaces,
      partners: this.partners,
      logger: pino({ level: 'silent' }),
      cacheTtlMs: 0,
      defaultRateLimits: { workspacePerMinute: 600, partnerPerMinute: 1200 },
    });
  }

  static async open(mongo: TestMongo): Promise<Tenants> {
    const client = new MongoClient(mongo.uri);
    await client.connect();
    return new Tenants(client, mongo.dbName);
  }

  async aWorkspace(overrides: Partial<WorkspaceDoc> & { limits?: Partial<PlanLimits> } = {}): Promise<WorkspaceDoc> {
    const { limits, ...rest } = overrides;
    const doc: WorkspaceDoc = {
      _id: newId('ws'),
      name: 'Acme',
      plan_id: 'pro',
      partner_id: null,
      limits_override: limits ?? null,
      created_at: new Date(),
      ...rest,
    };
    await this.workspaces.insert(doc);
    return doc;
  }

  async aPartner(overrides: { rate_limit_per_minute?: number | null } = {}): Promise<string> {
    const id = newId('ptr');
    await this.partners.insert({ _id: id, name: 'Partner Co', rate_limit_per_minute: overrides.rate_limit_per_minute ?? null, created_at: new Date() });
    return id;
  }

  async aWorkspaceKey(workspaceId: string, scopes: readonly Scope[] = ALL_SCOPES, expiresAt: Date | null = null): Promise<{ id: string; key: string }> {
    const created = await this.keys.create({ kind: 'workspace', ownerId: workspaceId, scopes, expiresAt });
    return { id: created.record._id, key: created.key };
  }

  async aPartnerKey(partnerId: string, scopes: readonly Scope[] = ALL_SCOPES): Promise<{ id: string; key: string }> {
    const created = await this.keys.create({ kind: 'partner', ownerId: partnerId, scopes });
    return { id: created.record._id, key: created.key };
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

export function bearer(key: string): Record<string, string> {
  return { Authorization: `Bearer ${key}` };
}
