import { newId } from '../platform/ids.ts';
import { displayName } from '../platform/schema.ts';
import { ValidationError } from '../platform/errors.ts';
import type { PartnerDoc, PartnerStore } from './partner.store.ts';
import { clientPage, type WorkspaceDoc, type WorkspaceStore } from '../workspace/workspace.store.ts';
import { decodeCursor, pageOf, type Pagination } from '../http/cursor.ts';
import type { Client } from './partner.schemas.ts';
import { ownerEmail } from '../platform/email.ts';

export function clientView(ws: WorkspaceDoc): Client {
  return { id: ws._id, name: ws.name, plan: ws.plan_id, created_at: ws.created_at.toISOString() };
}

export class PartnerService {
  private readonly partners: PartnerStore;
  private readonly workspaces: WorkspaceStore | null;
  constructor(partners: PartnerStore, workspaces: WorkspaceStore | null = null) {
    this.partners = partners;
    this.workspaces = workspaces;
  }

  async create(input: { name: string; ownerEmail?: string | null }): Promise<PartnerDoc> {
    const name = displayName(input.name, 120);
    if (name === null) throw new ValidationError([{ path: 'name', message: 'must be 1 to 120 characters, not all white space' }]);
    const email = ownerEmail(input.ownerEmail);
    const doc: PartnerDoc = { _id: newId('ptr'), name, rate_limit_per_minute: null, owner_email: email, created_at: new Date() };
    await this.partners.insert(doc);
    return doc;
  }

  async listClients(partnerId: string, cursor: string | undefined, limit: number): Promise<{ data: Client[]; pagination: Pagination }> {
    if (!this.workspaces) throw new Error('PartnerService was built without the workspace store');
    const after = cursor === undefined ? null : (decodeCursor(cursor, { id: 'string' }).id as string);
    // One extra row tells whether another page exists without a count.
    const rows = await clientPage(this.workspaces, partnerId, after, limit + 1);
    const { page, pagination } = pageOf(rows, limit, (ws) => ({ id: ws._id }));
    return { data: page.map(clientView), pagination };
  }
}
