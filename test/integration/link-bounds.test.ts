import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { LINK_BOUNDS, LINK_BOUND_TITLES, aFullLink, show, withValue, type Bound, type LinkBoundSection, type Obj } from '../helpers/link-fixtures.ts';

// The LinkCreate bounds of spec 2.1–2.6 over real HTTP: the same rows as test/unit/link-schemas.test.ts, each sent to
// POST /v1/links on the full link fixture. At the limit (`ok`) the link is created (201); one past it (`bad`) the
// answer is 422 validation_failed naming the field. The workspace is on the business plan (every capability), and
// every folder, tag and domain id any body names exists in the workspace, those of the `bad` bodies too: only the
// bound can refuse a `bad` body, never a missing reference.

interface Detail {
  path: string;
  message: string;
}
interface Reply {
  status: number;
  body: Obj & { error?: { code: string; message: string; details?: Detail[] } };
}
interface Row {
  section: LinkBoundSection;
  bound: Bound;
  ok: Obj;
  bad: Obj;
}

/** Requests in flight at once: enough to finish in seconds, few enough to stay far from the api's limits. */
const CONCURRENCY = 8;

/**
 * aFullLink() without its slug (the api draws one per link, so bodies never collide) and without its password: a
 * password costs a scrypt hash (~50–150 ms of CPU) per created link, and no bound depends on it. The password rows
 * put it back, and the first test below creates the fixture with it.
 */
function httpFixture(): Obj {
  const { slug: _slug, password: _password, ...link } = aFullLink();
  return link;
}

const ROWS: Row[] = (Object.keys(LINK_BOUNDS) as LinkBoundSection[]).flatMap((section) =>
  LINK_BOUNDS[section].map((bound) => ({
    section,
    bound,
    ok: withValue(httpFixture(), bound.path, bound.ok),
    bad: withValue(httpFixture(), bound.path, bound.bad),
  })),
);

/** Every folder, tag and custom domain id that the fixture or a row body names (strings only: a wrong type is the schema's). */
function referencedIds(bodies: readonly Obj[]): { folders: string[]; tags: string[]; domains: string[] } {
  const folders = new Set<string>();
  const tags = new Set<string>();
  const domains = new Set<string>();
  for (const body of bodies) {
    if (typeof body.folder_id === 'string') folders.add(body.folder_id);
    if (typeof body.domain_id === 'string' && body.domain_id !== 'dom_default') domains.add(body.domain_id);
    if (Array.isArray(body.tag_ids)) for (const id of body.tag_ids) if (typeof id === 'string') tags.add(id);
  }
  return { folders: [...folders], tags: [...tags], domains: [...domains] };
}

/** Runs at most `n` tasks at once, the others in the order they were given. */
function limiter(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (active < n) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The slot goes straight to the next waiting task, if any.
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

function testName({ path, ok, bad, at }: Bound): string {
  return `${path}: ${show(ok)} is created, ${show(bad)} is 422 naming ${at === path ? 'the field' : at}`;
}

describe('POST /v1/links: the bounds of spec 2.1–2.6 over HTTP', function () {
  this.timeout(120_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let key: string;
  /** The two answers of each row, requested in the before hook (in small parallel batches); each test awaits its own. */
  const replies = new Map<Row, Promise<{ ok: Reply; bad: Reply }>>();

  async function post(body: Obj): Promise<Reply> {
    const res = await fetch(`${running.url}/v1/links`, {
      method: 'POST',
      headers: { ...bearer(key), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as Reply['body'] };
  }

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo, { SHORT_LINK_BASE_URL: 'https://lnk.test', DEFAULT_SHORT_DOMAIN: 'lnk.test' }));
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;

    const db = tenants.client.db(mongo.dbName);
    const ids = referencedIds([httpFixture(), ...ROWS.flatMap((r) => [r.ok, r.bad])]);
    const created_at = new Date();
    await db.collection<Obj & { _id: string }>('folders').insertMany(ids.folders.map((_id, i) => ({ _id, workspace_id: ws._id, name: `Folder ${i}`, created_at })));
    await db.collection<Obj & { _id: string }>('tags').insertMany(ids.tags.map((_id, i) => ({ _id, workspace_id: ws._id, name: `Tag ${i}`, color: null, created_at })));
    if (ids.domains.length > 0) {
      await db
        .collection<Obj & { _id: string }>('domains')
        .insertMany(ids.domains.map((_id, i) => ({ _id, workspace_id: ws._id, hostname: `go${i}.bounds.test`, status: 'active', created_at })));
    }

    const limit = limiter(CONCURRENCY);
    for (const row of ROWS) {
      const pending = limit(async () => ({ ok: await post(row.ok), bad: await post(row.bad) }));
      pending.catch(() => {}); // awaited by the row's test; a test left out by --grep must not leave it unhandled
      replies.set(row, pending);
    }
  });

  after(async () => {
    await Promise.allSettled(replies.values());
    await tenants?.close();
    await running?.stop();
    await mongo?.stop();
  });

  it('the full fixture, password included, with every folder, tag and domain it names, is created', async () => {
    const res = await post({ ...httpFixture(), password: aFullLink().password });
    expect(res.status, JSON.stringify(res.body.error)).to.equal(201);
    expect(res.body).to.include({ folder_id: 'fld_campaigns', has_password: true });
    expect((res.body.tags as Obj[]).map((t) => t.id)).to.deep.equal(['tag_spring', 'tag_email']);
  });

  it('a folder, tag or domain id that does not exist is 422 naming it (why every referenced id is created first)', async () => {
    const res = await post({ ...httpFixture(), folder_id: 'fld_nowhere', tag_ids: ['tag_spring', 'tag_nowhere'], domain_id: 'dom_nowhere' });
    expect(res.status).to.equal(422);
    expect(res.body.error!.details!.map((d) => d.path)).to.have.members(['domain_id', 'folder_id', 'tag_ids[1]']);
  });

  for (const section of Object.keys(LINK_BOUNDS) as LinkBoundSection[]) {
    describe(LINK_BOUND_TITLES[section], () => {
      for (const row of ROWS.filter((r) => r.section === section)) {
        it(testName(row.bound), async () => {
          const { ok, bad } = await replies.get(row)!;
          expect(ok.status, `at the limit: ${JSON.stringify(ok.body.error ?? ok.body)}`).to.equal(201);
          expect(ok.body.id, 'the created link').to.be.a('string');
          expect(bad.status, `one past the limit: ${JSON.stringify(bad.body.error ?? { created: bad.body.id })}`).to.equal(422);
          expect(bad.body.error?.code).to.equal('validation_failed');
          const details = bad.body.error?.details ?? [];
          // The field at fault, and nothing else: the rest of the body is valid and its references are real.
          expect([...new Set(details.map((d) => d.path))], JSON.stringify(details)).to.deep.equal([row.bound.at]);
        });
      }
    });
  }
});
