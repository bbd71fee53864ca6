import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes drawn from the CSPRNG a few KB at a time and handed out in order, each byte once: a bulk create names
 * hundreds of ids and slugs per call, and a randomBytes call for each cost more than the rest of making them.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

function nextRandomByte(): number {
  if (poolAt === pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  return pool[poolAt++]!;
}

/** `length` characters drawn uniformly from [0-9A-Za-z] (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextRandomByte();
    // 248 = 4 * 62: bytes at or above it would favour the first characters.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

export type IdKind = 'ws' | 'ptr' | 'key' | 'evt' | 'lnk' | 'dom' | 'wh' | 'dlv' | 'tag' | 'fld' | 'ipl' | 'cnv' | 'rpt' | 'alr' | 'alf' | 'pln' | 'pmt' | 'rfd' | 'po' | 'usr' | 'ses' | 'inv' | 'mbr' | 'imp' | 'app';

/** Resource ids are prefixed by kind (`ws_…`, `key_…`) so a misplaced id is obvious in logs and support tickets. */
export function newId(kind: IdKind): string {
  return `${kind}_${randomBase62(20)}`;
}
