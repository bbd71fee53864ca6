// The live click stream (GET /v1/clicks/stream) over real HTTP: visits answered by the real redirect reach an open
// Server-Sent Events stream, filtered by link on request, and a client reconnecting with Last-Event-ID gets every
// click it missed, once, before the live ones.
import { expect } from 'chai';
import { startTestMongo, type TestMongo } from '../helpers/mongo.ts';
import { shortLinkEnv } from '../helpers/env.ts';
import { startApi, startRedirect, type RunningApi, type RunningRedirect } from '../helpers/api.ts';
import { bearer, Tenants } from '../helpers/tenants.ts';
import { callApi, type Json } from '../helpers/http.ts';
import { until } from '../helpers/wait.ts';

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';

interface SseEvent {
  id: string | null;
  event: string | null;
  data: Json;
}

/** An open event stream: the events parsed so far, the comments seen, and a way to hang up. */
interface Reader {
  status: number;
  contentType: string | null;
  events: SseEvent[];
  comments: string[];
  close(): void;
}

async function openStream(url: string, headers: Record<string, string>): Promise<Reader> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  const reader: Reader = { status: res.status, contentType: res.headers.get('content-type'), events: [], comments: [], close: () => controller.abort() };
  if (res.status !== 200 || !res.body) return reader;
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | null = null;
          let event: string | null = null;
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) reader.comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length > 0) reader.events.push({ id, event, data: JSON.parse(data.join('\n')) as Json });
        }
      }
    } catch {
      // Aborted by close().
    }
  })();
  return reader;
}

describe('live click stream over Server-Sent Events (api, redirect, real NATS)', function () {
  this.timeout(60_000);
  let mongo: TestMongo;
  let api: RunningApi;
  let redirect: RunningRedirect;
  let tenants: Tenants;
  let key: string;
  const readers: Reader[] = [];

  before(async () => {
    mongo = await startTestMongo();
    const { env } = await shortLinkEnv(mongo);
    api = await startApi(env);
    redirect = await startRedirect(env);
    tenants = await Tenants.open(mongo);
    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    key = (await tenants.aWorkspaceKey(ws._id)).key;
  });

  after(async () => {
    for (const reader of readers) reader.close();
    await redirect.stop();
    await api.stop();
    await tenants.close();
    await mongo.stop();
  });

  async function stream(query = '', headers: Record<string, string> = {}): Promise<Reader> {
    const reader = await openStream(`${api.url}/v1/clicks/stream${query}`, { ...bearer(key), ...headers });
    readers.push(reader);
    if (reader.status === 200) await until(() => reader.comments.includes('connected'), 10_000, 'the stream to open');
    return reader;
  }

  async function aLink(url: string): Promise<Json> {
    return (await callApi(api.url, 'POST', '/links', { key, body: { url } })).body;
  }

  async function click(link: Json): Promise<void> {
    const res = await fetch(link.short_url as string, { redirect: 'manual', headers: { 'user-agent': BROWSER } });
    await res.body?.cancel();
    expect(res.status).to.equal(302);
  }

  const clicksOf = (reader: Reader, link: Json) => reader.events.filter((e) => e.data.link_id === link.id);

  it('delivers a click as it happens, with an event id, the visitor and the decision', async () => {
    const reader = await stream();
    expect(reader.contentType).to.equal('text/event-stream; charset=utf-8');
    const link = await aLink('https://example.com/live');
    await click(link);
    const [event] = await until(() => (clicksOf(reader, link).length === 1 ? clicksOf(reader, link) : false), 10_000, 'the click on the stream');
    expect(event!.event).to.equal('click');
    expect(event!.id).to.match(/^\d+-\d+$/);
    expect(event!.data).to.include({ link_id: link.id, slug: link.slug, outcome: 'redirect', destination: 'https://example.com/live' });
    expect((event!.data.visitor as Json).visitor_type).to.equal('human');
    expect((event!.data.decision as Json).step).to.equal('url');
  });

  it('streams one link\'s clicks only when asked to', async () => {
    const a = await aLink('https://example.com/a');
    const b = await aLink('https://example.com/b');
    const onlyB = await stream(`?link_id=${b.id as string}`);
    const all = await stream();
    await click(a);
    await click(b);
    await until(() => clicksOf(all, a).length === 1 && clicksOf(all, b).length === 1, 10_000, 'both clicks on the whole stream');
    await until(() => clicksOf(onlyB, b).length === 1, 10_000, 'the click on b');
    expect(onlyB.events.every((e) => e.data.link_id === b.id)).to.equal(true);
  });

  it('resumes after Last-Event-ID with every missed click once, then the live ones', async () => {
    const link = await aLink('https://example.com/resume');
    const watcher = await stream(`?link_id=${link.id as string}`);
    const first = await stream(`?link_id=${link.id as string}`);
    await click(link);
    const [seen] = await until(() => (clicksOf(first, link).length === 1 ? clicksOf(first, link) : false), 10_000, 'the first click');
    first.close();

    // Missed while disconnected (the watcher shows they were published).
    for (let i = 0; i < 5; i++) await click(link);
    const published = await until(() => (clicksOf(watcher, link).length === 6 ? clicksOf(watcher, link) : false), 10_000, 'five more clicks published');

    const resumed = await stream(`?link_id=${link.id as string}`, { 'Last-Event-ID': seen!.id! });
    await until(() => clicksOf(resumed, link).length === 5, 10_000, 'the missed clicks replayed');
    expect(clicksOf(resumed, link).map((e) => e.data.id)).to.deep.equal(published.slice(1).map((e) => e.data.id));
    expect(clicksOf(resumed, link).map((e) => e.id)).to.deep.equal(published.slice(1).map((e) => e.id));

    await click(link);
    await until(() => clicksOf(resumed, link).length === 6, 10_000, 'the live click after the replay');
    const ids = clicksOf(resumed, link).map((e) => e.data.id);
    expect(new Set(ids).size).to.equal(6);
    expect(ids).not.to.include(seen!.data.id);
  });

  it('accepts the resume point as a query parameter, refuses a malformed one, and needs analytics:read', async () => {
    const link = await aLink('https://example.com/query');
    const watcher = await stream(`?link_id=${link.id as string}`);
    await click(link);
    await click(link);
    const both = await until(() => (clicksOf(watcher, link).length === 2 ? clicksOf(watcher, link) : false), 10_000, 'two clicks');
    const resumed = await stream(`?link_id=${link.id as string}&last_event_id=${both[0]!.id!}`);
    await until(() => clicksOf(resumed, link).length === 1, 10_000, 'the second click replayed');
    expect(clicksOf(resumed, link)[0]!.data.id).to.equal(both[1]!.data.id);

    const bad = await fetch(`${api.url}/v1/clicks/stream`, { headers: { ...bearer(key), 'Last-Event-ID': 'yesterday' } });
    expect(bad.status).to.equal(422);
    expect(((await bad.json()) as { error: { details: Json[] } }).error.details[0]).to.include({ path: 'Last-Event-ID' });

    const ws = await tenants.aWorkspace({ plan_id: 'business' });
    const linksOnly = (await tenants.aWorkspaceKey(ws._id, ['links:read'])).key;
    const refused = await fetch(`${api.url}/v1/clicks/stream`, { headers: bearer(linksOnly) });
    expect(refused.status).to.equal(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('insufficient_scope');
  });
});
