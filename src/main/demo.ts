import type { KeyService } from '../tenancy/key.service.ts';
import { ALL_SCOPES } from '../tenancy/scopes.ts';
import type { Stores } from './stores.ts';
import { WorkspaceService } from '../workspace/workspace.service.ts';
import { createPartner } from '../partner/partner.service.ts';
import { createUser, generatePassword, grant } from '../users/accounts.ts';

export const DEMO_EMAIL = 'demo@linkplane.localhost';

export interface DemoTenants {
  workspaceId: string;
  partnerId: string;
  workspaceKey: string;
  partnerKey: string;
  /** The dashboard sign-in of the demo user, owner of both. */
  email: string;
  password: string;
}

/**
 * First start of all-in-one on an empty database: a demo partner with one client workspace and a key for each,
 * and a dashboard user owning both, so a newcomer can call the API and sign in at once. Keys and the password exist
 * only as hashes afterwards: they are shown this one time.
 */
export async function seedDemo(stores: Stores, keys: KeyService, defaultRatePerMinute: number): Promise<DemoTenants | null> {
  if (!(await stores.workspaces.isEmpty())) return null;
  const partner = await createPartner(stores.partners, { name: 'Demo partner' });
  const workspace = await new WorkspaceService({
    workspaces: stores.workspaces,
    partners: stores.partners,
    usage: stores.usage,
    defaultRatePerMinute,
  }).create({ name: 'Demo workspace', planId: 'business', partnerId: partner._id });
  const workspaceKey = await keys.create({ kind: 'workspace', ownerId: workspace._id, scopes: ALL_SCOPES, name: 'demo' });
  const partnerKey = await keys.create({ kind: 'partner', ownerId: partner._id, scopes: ALL_SCOPES, name: 'demo' });
  const password = generatePassword();
  const user = await createUser(stores.users, { email: DEMO_EMAIL, name: 'Demo user', password });
  const targets = { exists: () => Promise.resolve(true) };
  await grant(stores.memberships, targets, { userId: user._id, kind: 'workspace', targetId: workspace._id, role: 'owner' });
  await grant(stores.memberships, targets, { userId: user._id, kind: 'partner', targetId: partner._id, role: 'owner' });
  return { workspaceId: workspace._id, partnerId: partner._id, workspaceKey: workspaceKey.key, partnerKey: partnerKey.key, email: DEMO_EMAIL, password };
}
