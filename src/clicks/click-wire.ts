// How clicks travel on the CLICKS stream. Clicks of one workspace published together go as one message in a
// compact form: a table of the strings they share (link, domain, destination, time, browser, country…) and one
// positional tuple per click. The same JSON objects, keys repeated in every click, were three times larger, and the
// NATS server persisting them was most of a redirect's cost. The decoder also reads plain ClickRecord JSON (one
// object or an array), the form a publisher of an earlier version sends.
import type { ClickRecord } from '../visitor/click-record.ts';
import type { DecisionTrace } from '../visitor/click-record.ts';

/** Marks the compact form (and its version) as the first element of the message's JSON array. */
export const WIRE_FORMAT = 'lpc1';

const NONE = -1;

type Tuple = unknown[];

/** Builds the shared string table while clicks are encoded; repeated strings cost one small integer each. */
class StringTable {
  readonly strings: string[] = [];
  private readonly index = new Map<string, number>();

  ref(value: string | null): number {
    if (value === null) return NONE;
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(value);
      this.index.set(value, i);
    }
    return i;
  }
}

/** One message body for clicks of one workspace: `["lpc1", workspace_id, [strings], [click tuples]]`. */
export function encodeClicks(workspaceId: string, clicks: readonly ClickRecord[]): string {
  const table = new StringTable();
  const tuples: Tuple[] = [];
  for (const c of clicks) {
    const d = c.decision;
    const v = c.visitor;
    tuples.push([
      c.id,
      table.ref(c.ts),
      table.ref(c.link_id),
      table.ref(c.domain_id),
      table.ref(c.domain),
      table.ref(c.slug),
      table.ref(c.outcome),
      table.ref(c.destination),
      [table.ref(d.step), table.ref(d.ruleId), d.workspaceRule ? 1 : 0, d.targetingIndex ?? NONE, d.variantIndex ?? NONE, table.ref(d.destinationId), d.rotatorFallback ? 1 : 0],
      [
        table.ref(v.ip),
        table.ref(v.device),
        table.ref(v.os),
        table.ref(v.browser),
        table.ref(v.language),
        table.ref(v.country),
        table.ref(v.region),
        table.ref(v.city),
        v.asn ?? NONE,
        table.ref(v.visitor_type),
        v.verified_bot ? 1 : 0,
        table.ref(v.bot_name),
        table.ref(v.proxy_type),
        v.quality,
        table.ref(v.referer),
        v.visit === 'repeat' ? 1 : 0,
        v.visitor_id,
      ],
    ]);
  }
  return JSON.stringify([WIRE_FORMAT, workspaceId, table.strings, tuples]);
}

/** The clicks of a message body (compact or plain JSON); null when it is not a well-formed click message. */
export function decodeClicks(body: unknown): ClickRecord[] | null {
  if (Array.isArray(body) && body[0] === WIRE_FORMAT) return decodeCompact(body);
  const records = Array.isArray(body) ? (body as unknown[]) : [body];
  return records.length > 0 && records.every(isClickRecord) ? records : null;
}

function decodeCompact(body: unknown[]): ClickRecord[] | null {
  const [, workspaceId, strings, tuples] = body;
  if (typeof workspaceId !== 'string' || !Array.isArray(strings) || !Array.isArray(tuples) || tuples.length === 0) return null;
  if (!strings.every((s) => typeof s === 'string')) return null;
  const table = strings;
  const str = (i: unknown): string | null => {
    if (i === NONE) return null;
    if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= table.length) throw new TypeError('bad string reference');
    return table[i]!;
  };
  const required = (i: unknown): string => {
    const s = str(i);
    if (s === null) throw new TypeError('missing string');
    return s;
  };
  const int = (n: unknown): number | null => {
    if (n === NONE) return null;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) throw new TypeError('bad integer');
    return n;
  };
  try {
    const records = tuples.map((tuple): ClickRecord => {
      if (!Array.isArray(tuple) || tuple.length !== 10 || typeof tuple[0] !== 'string') throw new TypeError('bad click tuple');
      const d = tuple[8] as unknown;
      const v = tuple[9] as unknown;
      if (!Array.isArray(d) || d.length !== 7 || !Array.isArray(v) || v.length !== 17 || typeof v[16] !== 'string' || typeof v[13] !== 'number') {
        throw new TypeError('bad click tuple');
      }
      return {
        id: tuple[0],
        ts: required(tuple[1]),
        workspace_id: workspaceId,
        link_id: required(tuple[2]),
        domain_id: required(tuple[3]),
        domain: required(tuple[4]),
        slug: required(tuple[5]),
        outcome: required(tuple[6]),
        destination: str(tuple[7]),
        decision: {
          step: required(d[0]) as DecisionTrace['step'],
          ruleId: str(d[1]),
          workspaceRule: d[2] === 1,
          targetingIndex: int(d[3]),
          variantIndex: int(d[4]),
          destinationId: str(d[5]),
          rotatorFallback: d[6] === 1,
        },
        visitor: {
          ip: str(v[0]),
          device: required(v[1]) as ClickRecord['visitor']['device'],
          os: required(v[2]) as ClickRecord['visitor']['os'],
          browser: str(v[3]),
          language: str(v[4]),
          country: str(v[5]),
          region: str(v[6]),
          city: str(v[7]),
          asn: int(v[8]),
          visitor_type: required(v[9]) as ClickRecord['visitor']['visitor_type'],
          verified_bot: v[10] === 1,
          bot_name: str(v[11]),
          proxy_type: str(v[12]) as ClickRecord['visitor']['proxy_type'],
          quality: v[13],
          referer: str(v[14]),
          visit: v[15] === 1 ? 'repeat' : 'first',
          visitor_id: v[16],
        },
      };
    });
    return records.every(isClickRecord) ? records : null;
  } catch {
    return null;
  }
}

function isClickRecord(value: unknown): value is ClickRecord {
  const record = value as Partial<ClickRecord> | null;
  if (typeof record?.id !== 'string' || typeof record.workspace_id !== 'string' || typeof record.link_id !== 'string') return false;
  return typeof record.ts === 'string' && !Number.isNaN(Date.parse(record.ts)) && typeof record.decision === 'object' && record.decision !== null;
}
