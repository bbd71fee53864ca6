import type { Db } from 'mongodb';
import type { WorkspaceDoc } from '../tenancy/workspace.store.ts';
import type { IpListDoc } from '../iplists/ip-list.store.ts';
import type { WorkspaceRedirectSettings } from './compile.ts';

/**
 * What the redirect needs of a workspace: its rules, whether conversion tracking is on, and every IP list (link
 * rules may name any of them, not only the workspace rules). Two queries run side by side, each reading only the
 * fields used here. Null when the workspace does not exist.
 */
export async function loadRedirectSettings(db: Db, workspaceId: string): Promise<WorkspaceRedirectSettings | null> {
  const [workspace, lists] = await Promise.all([
    db
      .collection<WorkspaceDoc>('workspaces')
      .findOne({ _id: workspaceId }, { projection: { _id: 1, rules: 1, conversion_tracking: 1, redirect_suspended: 1 } }) as Promise<Pick<WorkspaceDoc, '_id' | 'rules' | 'conversion_tracking' | 'redirect_suspended'> | null>,
    db
      .collection<IpListDoc>('ip_lists')
      .find({ workspace_id: workspaceId }, { projection: { _id: 1, entries: 1 } })
      .toArray() as Promise<Array<Pick<IpListDoc, '_id' | 'entries'>>>,
  ]);
  if (!workspace) return null;
  const ipLists: Record<string, string[]> = {};
  for (const list of lists) ipLists[list._id] = list.entries;
  const settings: WorkspaceRedirectSettings = { rules: workspace.rules ?? [], conversionTracking: workspace.conversion_tracking ?? false, ipLists };
  if (workspace.redirect_suspended === true) settings.suspended = true;
  return settings;
}
