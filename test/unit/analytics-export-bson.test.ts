import { expect } from 'chai';
import { BSONRegExp, Double, Int32, Long, deserialize, serialize } from 'bson';
import { ROW_DECISION, ROW_VISITOR, readRowClick, type RowClick } from '../../src/analytics/export-bson.ts';
import { toClickDoc, type ClickDoc } from '../../src/clicks/click.store.ts';
import { pick, randomClick, seeded, type TestLink } from '../helpers/analytics-clicks.ts';

const links: TestLink[] = [
  { id: 'lnk_a', domain_id: 'dom_1', domain: 'go.example', slug: 'a', tag_ids: [], folder_id: null },
  { id: 'lnk_ü', domain_id: 'dom_2', domain: 'xn--bcher-kva.example', slug: 'ü/東京', tag_ids: [], folder_id: null },
];

/** What the generic decoder gives for the fields of a row: what readRowClick must give. */
function generic(bytes: Uint8Array): RowClick {
  const doc = deserialize(bytes) as ClickDoc;
  const of = <T extends object>(o: T, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, (o as Record<string, unknown>)[k]]));
  return {
    _id: doc._id,
    ts: doc.ts,
    link_id: doc.link_id,
    domain: doc.domain,
    slug: doc.slug,
    destination: doc.destination,
    outcome: doc.outcome,
    conversions: doc.conversions,
    revenue: doc.revenue,
    visitor: of(doc.visitor, ROW_VISITOR) as RowClick['visitor'],
    decision: of(doc.decision, ROW_DECISION) as RowClick['decision'],
  };
}

describe('analytics CSV export: reading a stored click', () => {
  it('reads the fields of a row as the generic decoder does: strings of any script, nulls, every numeric type, revenue, fields in any order', () => {
    const rand = seeded(41);
    const t = Date.parse('2026-11-12T08:00:00Z');
    for (let n = 0; n < 400; n++) {
      const click = randomClick(rand, 'ws_bson', links, t - 400 * 86_400_000, t, 50);
      click.visitor.city = pick(rand, [click.visitor.city, '', 'Zürich 東京 🚀', 'line\nbreak, "quoted"', 'x'.repeat(300)]);
      click.visitor.bot_name = pick(rand, [null, 'Googlebot']);
      click.visitor.proxy_type = pick(rand, [null, 'VPN'] as const);
      click.visitor.verified_bot = rand() < 0.5;
      const doc: Record<string, unknown> = { ...toClickDoc(click, new Date(t + 86_400_000)) };
      // Numbers as the generic decoder may meet them: 32-bit, double, 64-bit (exact).
      const numeric = (x: number) => pick(rand, [new Int32(x), new Double(x), Long.fromNumber(x)]);
      const visitor = { ...(doc.visitor as Record<string, unknown>) };
      visitor.quality = pick(rand, [numeric(90), 87.5]);
      if (visitor.asn !== null) visitor.asn = numeric(visitor.asn as number);
      if (rand() < 0.5) {
        doc.conversions = numeric(Math.floor(rand() * 5));
        doc.revenue = rand() < 0.5 ? { EUR: numeric(1250), USD: -300, JPY: 2 ** 40 } : {};
      }
      // Fields in another order, and fields the reader steps over.
      const shuffled = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(() => rand() - 0.5));
      doc.visitor = shuffled({ ...visitor, extra: [1, 'x', { y: null }] });
      doc.decision = shuffled(doc.decision as Record<string, unknown>);
      const bytes = serialize(rand() < 0.5 ? shuffled(doc) : doc);
      expect(readRowClick(bytes), `click ${n}`).to.deep.equal(generic(bytes));
    }
  });

  it('answers null, for the generic decoder to take over, on what our code never stores', () => {
    const rand = seeded(43);
    const t = Date.parse('2026-11-12T08:00:00Z');
    const base = () => toClickDoc(randomClick(rand, 'ws_bson', links, t, t + 1000, 5)) as unknown as Record<string, Record<string, unknown>>;
    const cases: Array<[string, (doc: Record<string, Record<string, unknown>>) => void]> = [
      ['a city that is a number', (d) => (d.visitor!.city = 5)],
      ['a visitor without its ip', (d) => delete d.visitor!.ip],
      ['no decision', (d) => delete d.decision],
      ['a visitor that is an array', (d) => (d.visitor = ['x'] as unknown as Record<string, unknown>)],
      ['a device that is null', (d) => (d.visitor!.device = null)],
      ['a long past 2^53', (d) => (d.visitor!.asn = Long.fromString('9007199254740993'))],
      ['a regular expression', (d) => (d.visitor!.referer = new BSONRegExp('x', 'i'))],
      ['a time that is a string', (d) => ((d as Record<string, unknown>).ts = '2026-11-12T08:00:00Z')],
      ['a revenue amount that is text', (d) => ((d as Record<string, unknown>).revenue = { EUR: '12' })],
    ];
    expect(readRowClick(serialize(base()))).to.not.equal(null);
    for (const [what, change] of cases) {
      const doc = base();
      change(doc);
      expect(readRowClick(serialize(doc)), what).to.equal(null);
    }
    const bytes = serialize(base());
    for (const cut of [0, 4, 5, 40, bytes.length - 1]) expect(readRowClick(bytes.subarray(0, cut)), `cut at ${cut}`).to.equal(null);
    const wrongLength = Buffer.from(bytes);
    wrongLength.writeInt32LE(bytes.length + 10, 0);
    expect(readRowClick(wrongLength)).to.equal(null);
  });
});
