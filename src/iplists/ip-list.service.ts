import { newId } from '../platform/ids.ts';
import { NotFoundError, QuotaExceededError, ValidationError, type ErrorDetail } from '../platform/errors.ts';
import type { CacheBus } from '../platform/cache-bus.ts';
import { requireCapabilities, type Principal } from '../tenancy/principal.ts';
import { isIpOrCidr } from '../rules/ip-match.ts';
import type { IpListChanges, IpListDoc, IpListStore } from './ip-list.store.ts';
import { MAX_IP_LISTS_PER_WORKSPACE, type IpList, type IpListCreate, type IpListList, type IpListUpdate } from './ip-list.schemas.ts';

type WorkspacePrincipal = Extract<Principal, { kind: 'workspace' }>;

export interface IpListServiceDeps {
  ipLists: IpListStore;
  /** Null in tools that run without NATS; the api always has it. */
  bus: CacheBus | null;
  now?: () => Date;
}

/** A list of 10 000 bad entries would make a 10 000-item error; the first ones are enough to fix the input. */
const MAX_ENTRY_DETAILS = 100;

/** Entries as stored: trimmed, each an IPv4/IPv6 address or CIDR range; the bad ones are named `<root>[i]`. */
export function normalizeEntries(entries: readonly string[], root = 'entries'): string[] {
  const details: ErrorDetail[] = [];
  const out = entries.map((entry, i) => {
    const trimmed = entry.trim();
    if (!isIpOrCidr(trimmed) && details.length < MAX_ENTRY_DETAILS) details.push({ path: `${root}[${i}]`, message: 'is not an IP address or CIDR range' });
    return trimmed;
  });
  if (details.length > 0) throw new ValidationError(details);
  return out;
}

/**
 * IP lists per workspace. The redirect caches them with the workspace's settings, so every change broadcasts a
 * workspace invalidation. Reading and deleting stay open to a plan without `ip_lists` (after a downgrade the
 * lists can still be seen and removed); creating and changing need it.
 */
export class IpListService {
  private readonly d: IpListServiceDeps;
  private readonly now: () => Date;
  constructor(deps: IpListServiceDeps) {
    this.d = deps;
    this.now = deps.now ?? (() => new Date());
  }

  async create(principal: WorkspacePrincipal, input: IpListCreate): Promise<IpList> {
    requireCapabilities(principal, ['ip_lists']);
    const workspaceId = principal.workspace._id;
    const entries = normalizeEntries(input.entries);
    // Checked before writing for a clean refusal, and again after: two concurrent creates at 99 cannot both stay.
    if ((await this.d.ipLists.count(workspaceId)) >= MAX_IP_LISTS_PER_WORKSPACE) throw new QuotaExceededError('IP lists', MAX_IP_LISTS_PER_WORKSPACE);
    const now = this.now();
    const doc: IpListDoc = { _id: newId('ipl'), workspace_id: workspaceId, name: input.name, entries, note: input.note ?? null, created_at: now, updated_at: now };
    await this.d.ipLists.insert(doc);
    if ((await this.d.ipLists.count(workspaceId)) > MAX_IP_LISTS_PER_WORKSPACE) {
      await this.d.ipLists.delete(workspaceId, doc._id);
      throw new QuotaExceededError('IP lists', MAX_IP_LISTS_PER_WORKSPACE);
    }
    await this.invalidate(workspaceId);
    return view(doc);
  }

  async list(principal: WorkspacePrincipal): Promise<IpListList> {
    const docs = await this.d.ipLists.list(principal.workspace._id);
    return { data: docs.map(view), pagination: { next_cursor: null, has_more: false } };
  }

  async get(principal: WorkspacePrincipal, id: string): Promise<IpList> {
    const doc = await this.d.ipLists.findById(principal.workspace._id, id);
    if (!doc) throw new NotFoundError('IP list');
    return view(doc);
  }

  async update(principal: WorkspacePrincipal, id: string, patch: IpListUpdate): Promise<IpList> {
    const workspaceId = principal.workspace._id;
    // A foreign or missing id is a 404 whatever the plan: existence is answered before the capability.
    if (!(await this.d.ipLists.findById(workspaceId, id))) throw new NotFoundError('IP list');
    requireCapabilities(principal, ['ip_lists']);
    const changes: IpListChanges = {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.entries !== undefined ? { entries: normalizeEntries(patch.entries) } : {}),
      ...(patch.note !== undefined ? { note: patch.note } : {}),
      updated_at: this.now(),
    };
    const updated = await this.d.ipLists.update(workspaceId, id, changes);
    if (!updated) throw new NotFoundError('IP list');
    await this.invalidate(workspaceId);
    return view(updated);
  }

  /** Rules naming a deleted list stay as they are and never match on it. */
  async delete(principal: WorkspacePrincipal, id: string): Promise<void> {
    const workspaceId = principal.workspace._id;
    if (!(await this.d.ipLists.delete(workspaceId, id))) throw new NotFoundError('IP list');
    await this.invalidate(workspaceId);
  }

  private async invalidate(workspaceId: string): Promise<void> {
    await this.d.bus?.publish({ kind: 'workspace', id: workspaceId });
  }
}

function view(doc: IpListDoc): IpList {
  return {
    id: doc._id,
    name: doc.name,
    entries: doc.entries,
    note: doc.note,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
