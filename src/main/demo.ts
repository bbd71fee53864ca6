import type { KeyService } from '../keys/key.service.ts';
import { ALL_SCOPES } from '../keys/scopes.ts';
import type { Stores } from './stores.ts';
import { WorkspaceService } from '../workspace/workspace.service.ts';
import { createPartner } from '../partner/partner.service.ts';

export interface DemoTenants {
  workspaceId: string;
  partnerId: string;
  workspaceKey: string;
  partnerKey: string;
}

/**
 * First start of all-in-one on an empty database: a demo partner with one client workspace and a key for each,
 * so a newcomer can call the API at once. Keys exist only as hashes afterwards: they are shown this one time.
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
  return { workspaceId: workspace._id, partnerId: partner._id, workspaceKey: workspaceKey.key, partnerKey: partnerKey.key };
}
