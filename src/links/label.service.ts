import { newId } from '../platform/ids.ts';
import { NotFoundError } from '../platform/errors.ts';
import type { LabelDoc, LabelStore } from './label.store.ts';
import type { LinkStore } from './link.store.ts';

export interface LabelView {
  id: string;
  name: string;
  color?: string | null;
  created_at: string;
}

/** Tags and folders: created, listed, renamed, deleted; deleting one detaches it from the links that had it. */
export class LabelService {
  private readonly labels: LabelStore;
  private readonly links: LinkStore;
  private readonly kind: 'tag' | 'folder';

  constructor(labels: LabelStore, links: LinkStore, kind: 'tag' | 'folder') {
    this.labels = labels;
    this.links = links;
    this.kind = kind;
  }

  view(doc: LabelDoc): LabelView {
    const base = { id: doc._id, name: doc.name, created_at: doc.created_at.toISOString() };
    return this.kind === 'tag' ? { ...base, color: doc.color ?? null } : base;
  }

  async create(workspaceId: string, input: { name: string; color?: string | null }): Promise<LabelView> {
    const doc: LabelDoc = {
      _id: newId(this.kind === 'tag' ? 'tag' : 'fld'),
      workspace_id: workspaceId,
      name: input.name,
      ...(this.kind === 'tag' ? { color: input.color ?? null } : {}),
      created_at: new Date(),
    };
    await this.labels.insert(doc);
    return this.view(doc);
  }

  async list(workspaceId: string): Promise<{ data: LabelView[] }> {
    return { data: (await this.labels.list(workspaceId)).map((d) => this.view(d)) };
  }

  async update(workspaceId: string, id: string, changes: { name?: string; color?: string | null }): Promise<LabelView> {
    const doc = await this.labels.update(workspaceId, id, changes);
    if (!doc) throw new NotFoundError(this.kind);
    return this.view(doc);
  }

  async delete(workspaceId: string, id: string): Promise<void> {
    if (!(await this.labels.delete(workspaceId, id))) throw new NotFoundError(this.kind);
    if (this.kind === 'tag') await this.links.removeTag(workspaceId, id);
    else await this.links.clearFolder(workspaceId, id);
  }
}
