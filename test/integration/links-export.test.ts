// GET /links/export: every link of a workspace with every field, as JSON Lines and as CSV, over HTTP against the api
// on devdb; and the stream reading the database only as fast as its reader takes the rows (bounded memory).
import { expect } from 'chai';
import { until } from '../helpers/wait.ts';
import Papa from 'papaparse';
import { MongoClient } from 'mongodb';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { testEnv } from '../helpers/env.ts';
import { startApi, type RunningApi } from '../helpers/api.ts';
import { Tenants, bearer } from '../helpers/tenants.ts';
import { callApi, type Json, type Reply } from '../helpers/http.ts';
import { LINK_EXPORT_COLUMNS, exportLinks } from '../../src/links/link.export.ts';
import { LinkStore } from '../../src/links/link.store.ts';
import { LabelStore } from '../../src/links/label.store.ts';

/** A CSV cell read back: one leading `'` dropped where the export neutralised a formula (docs/importing/export.md). */
function cellValue(cell: string): string {
  return /^'+[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
}

/** A CSV row of the export as the JSON line it stands for (tags as their names). */
function fromCsv(row: Record<string, string>): Json {
  const out: Json = {};
  for (const column of LINK_EXPORT_COLUMNS) {
    const cell = cellValue(row[column]!);
    if (['targeting', 'ab_test', 'rules', 'mobile', 'rotator', 'moderation', 'imported', 'tags'].includes(column)) out[column] = cell === '' ? null : JSON.parse(cell);
    else if (['has_password', 'workspace_rules_off', 'archived'].includes(column)) out[column] = cell === 'true';
    else if (column === 'redirect_type') out[column] = Number(cell);
    else out[column] = cell === '' ? null : cell;
  }
  return out;
}

describe('Links export (GET /links/export)', function () {
  this.timeout(180_000);
  let mongo: TestMongo;
  let running: RunningApi;
  let tenants: Tenants;
  let key: string;

  before(async () => {
    mongo = await startTestMongo();
    running = await startApi(testEnv(mongo, { SHORT_LINK_BASE_URL: 'https://lnk.test', DEFAULT_SHORT_DOMAIN: 'lnk.test' }));
    tenants = await Tenants.open(mongo);
    key = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'enterprise' }))._id)).key;
  });

  after(async () => {
    await tenants.close();
    await running.stop();
    await mongo.stop();
  });

  const call = (method: string, path: string, body?: unknown, as = key): Promise<Reply> => callApi(running.url, method, path, { key: as, body });
  const download = async (format: string, as = key) => {
    const res = await fetch(`${running.url}/v1/links/export?format=${format}`, { headers: bearer(as) });
    return { status: res.status, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition'), text: await res.text() };
  };

  it('streams every link with every field, as JSON Lines and as CSV, spreadsheet formulas neutralised', async () => {
    const spring = (await call('POST', '/tags', { name: 'spring', color: '#00ff00' })).body;
    const summer = (await call('POST', '/tags', { name: 'summer, "hot"' })).body;
    const folder = (await call('POST', '/folders', { name: 'Campaigns' })).body;
    const url = 'https://example.com/landing?x=1';
    const full = {
      url,
      slug: 'full-export',
      title: 'Everything, "quoted"\nand on two lines',
      note: 'a note',
      folder_id: folder.id,
      tag_ids: [spring.id, summer.id],
      redirect_type: 307,
      expires_at: '2031-01-01T00:00:00.000Z',
      expired_url: `${url}&expired=1`,
      password: 'correct horse',
      targeting: [{ match: { country: ['FR', 'DE'], device: ['mobile'] }, url: `${url}&t=1` }],
      ab_test: { enabled: true, variants: [{ url: `${url}&v=a`, weight: 50 }, { url: `${url}&v=b`, weight: 50 }] },
      rules: [{ enabled: true, invert: false, match: { country: ['US'] }, action: { type: 'redirect', url: `${url}&r=1` } }],
      workspace_rules_off: true,
      mobile: { enabled: true, desktop_url: `${url}&desktop=1`, ios: { store_url: `${url}&ios=1` } },
      rotator: { enabled: true, mode: 'uniform', destinations: [{ id: 'dest1', url: `${url}&d=1`, weight: 1, active: true }] },
      utm: { utm_source: 'news' },
    };
    const created = await call('POST', '/links/bulk', [
      full,
      { url: 'https://example.com/plain' },
      { url: 'https://example.com/formula', title: '=HYPERLINK("http://evil.example")' },
      { url: 'https://example.com/quoted-formula', title: "'+1" },
      { url: 'https://example.com/minus', title: '-5% off', note: '@mention' },
    ]);
    expect(created.body).to.deep.include({ created: 5, failed: 0 });
    const ids = (created.body.data as Array<{ link: { id: string } }>).map((d) => d.link.id);
    await call('PATCH', `/links/${ids[1]}`, { archived: true });
    // As the API shows each link, with its folder's name.
    const expected: Json[] = [];
    for (const id of ids) {
      const link = (await call('GET', `/links/${id}`)).body;
      expected.push({ ...link, folder_name: link.folder_id === folder.id ? 'Campaigns' : null });
    }
    // Oldest first; links created in the same millisecond in the order of their ids.
    const position = (l: Json) => `${String(l.created_at)} ${String(l.id)}`;
    expected.sort((a, b) => (position(a) < position(b) ? -1 : 1));

    const jsonl = await download('jsonl');
    expect(jsonl.status).to.equal(200);
    expect(jsonl.type).to.equal('application/x-ndjson; charset=utf-8');
    expect(jsonl.disposition).to.match(/^attachment; filename="links-ws_\w+\.jsonl"$/);
    expect(jsonl.text.endsWith('\n')).to.equal(true);
    const lines = jsonl.text.trimEnd().split('\n').map((line) => JSON.parse(line) as Json);
    expect(lines).to.deep.equal(expected);
    expect(lines.find((l) => l.slug === 'full-export')).to.deep.include({ has_password: true, redirect_type: 307, workspace_rules_off: true, folder_name: 'Campaigns' });
    expect(jsonl.text).not.to.contain('correct horse');
    expect(jsonl.text).not.to.contain('scrypt');

    const csv = await download('csv');
    expect(csv.status).to.equal(200);
    expect(csv.type).to.equal('text/csv; charset=utf-8');
    expect(csv.text.split('\r\n')[0]).to.equal(LINK_EXPORT_COLUMNS.join(','));
    const parsed = Papa.parse<Record<string, string>>(csv.text.trimEnd(), { header: true, newline: '\r\n' });
    expect(parsed.errors).to.deep.equal([]);
    expect(parsed.meta.fields).to.deep.equal([...LINK_EXPORT_COLUMNS]);
    // Cells a spreadsheet would run start with `'`, and so does a title that started with `'` before one.
    const titles = new Map(parsed.data.map((row) => [row.url, row.title]));
    expect(titles.get('https://example.com/formula')).to.equal('\'=HYPERLINK("http://evil.example")');
    expect(titles.get('https://example.com/quoted-formula')).to.equal("''+1");
    expect(titles.get('https://example.com/minus')).to.equal("'-5% off");
    expect(parsed.data.find((row) => row.url === 'https://example.com/minus')!.note).to.equal("'@mention");
    const rows = parsed.data.map(fromCsv);
    expect(rows).to.deep.equal(expected.map((line) => ({ ...line, tags: (line.tags as Array<{ name: string }>).map((t) => t.name) })));
  });

  it('exports only the workspace of the key, an empty one as its header alone, and refuses an unknown format', async () => {
    const other = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'enterprise' }))._id)).key;
    expect((await download('csv', other)).text).to.equal(`${LINK_EXPORT_COLUMNS.join(',')}\r\n`);
    expect((await download('jsonl', other)).text).to.equal('');
    const refused = await call('GET', '/links/export?format=xml');
    expect(refused.status).to.equal(422);
    expect(refused.body.error!.code).to.equal('validation_failed');
    const readOnly = (await tenants.aWorkspaceKey((await tenants.aWorkspace({ plan_id: 'enterprise' }))._id, ['links:write'])).key;
    expect((await call('GET', '/links/export', undefined, readOnly)).body.error!.code).to.equal('insufficient_scope');
  });

  it('streams a workspace of many links a batch at a time, reading ahead only as far as the reader takes', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'enterprise' });
    const many = (await tenants.aWorkspaceKey(ws._id)).key;
    const total = 3_000;
    for (let call100 = 0; call100 < total / 100; call100++) {
      const res = await call('POST', '/links/bulk', Array.from({ length: 100 }, (_, i) => ({ url: `https://example.com/${call100}/${i}`, title: `many ${call100}-${i}` })), many);
      expect(res.body.created).to.equal(100);
    }
    // Over HTTP: every link once, oldest first.
    const jsonl = await download('jsonl', many);
    const lines = jsonl.text.trimEnd().split('\n').map((line) => JSON.parse(line) as { id: string; created_at: string });
    expect(lines).to.have.length(total);
    expect(new Set(lines.map((l) => l.id)).size).to.equal(total);
    expect(lines.map((l) => l.created_at)).to.deep.equal(lines.map((l) => l.created_at).sort());

    // In this process, counting the cursor's reads: a reader that stops after two chunks has made the stream read
    // two or three batches, not the workspace; reading on reads the rest, a batch per chunk.
    const client = new MongoClient(mongo.uri, { monitorCommands: true });
    await client.connect();
    try {
      const db = client.db(mongo.dbName);
      let getMores = 0;
      client.on('commandStarted', (event) => {
        if (event.commandName === 'getMore') getMores++;
      });
      const stream = exportLinks({ links: new LinkStore(db), tags: new LabelStore(db, 'tags'), folders: new LabelStore(db, 'folders'), defaultBaseUrl: 'https://lnk.test' }, ws._id, 'jsonl');
      const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
      let text = '';
      for (let i = 0; i < 2; i++) text += String((await iterator.next()).value);
      // Let the stream fill its buffer as far as it would: it asks for one more chunk at most.
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      await client.db('admin').command({ ping: 1 });
      expect(getMores, 'batches read ahead of a reader that stopped').to.be.at.most(3);
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) text += String(next.value);
      expect(text.trimEnd().split('\n')).to.have.length(total);
      expect(getMores).to.be.at.least(total / 100 - 1);
    } finally {
      await client.close();
    }
  });
  it('runs two exports of a workspace at once at most, across API pods: a third answers 429 rate_limited with Retry-After', async () => {
    const ws = await tenants.aWorkspace({ plan_id: 'enterprise' });
    const busy = (await tenants.aWorkspaceKey(ws._id)).key;
    expect((await call('POST', '/links', { url: 'https://example.com/busy', slug: 'busy-export' }, busy)).status).to.equal(201);
    const slots = tenants.client.db(mongo.dbName).collection<{ _id: string; holder: string; expires_at: Date }>('link_export_slots');
    // Two exports streaming on other pods hold the workspace's two places (LINK_EXPORTS_PER_WORKSPACE, 2 by default).
    const inSeconds = (s: number) => new Date(Date.now() + s * 1000);
    await slots.insertMany([
      { _id: `${ws._id}|0`, holder: 'pod-a', expires_at: inSeconds(50) },
      { _id: `${ws._id}|1`, holder: 'pod-b', expires_at: inSeconds(20) },
    ]);
    const refused = await fetch(`${running.url}/v1/links/export?format=csv`, { headers: bearer(busy) });
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(refused.status).to.equal(429);
    expect(body.error.code).to.equal('rate_limited');
    expect(body.error.message).to.contain('2 links exports of this workspace are running');
    // The wait is until the first hold runs out, and never more than a hold lasts.
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 20);
    // Another workspace is not held back by this one's.
    expect((await download('jsonl')).status).to.equal(200);

    // Once one place frees (that export ended, or its pod died and its hold ran out), an export runs; when its
    // stream ends it gives its place back.
    await slots.updateOne({ _id: `${ws._id}|1` }, { $set: { expires_at: new Date(Date.now() - 1000) } });
    const ran = await download('jsonl', busy);
    expect(ran.status).to.equal(200);
    expect(ran.text).to.contain('busy-export');
    await until(async () => (await slots.countDocuments({ _id: `${ws._id}|1` })) === 0, 10_000, 'the export to give its place back');
    expect(await slots.countDocuments({ _id: `${ws._id}|0`, holder: 'pod-a' })).to.equal(1);
  });
});
