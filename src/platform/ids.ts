import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from [0-9A-Za-z] (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const bytes = randomBytes(length * 2);
    for (const byte of bytes) {
      // 248 = 4 * 62: bytes at or above it would favour the first characters.
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdKind = 'ws' | 'ptr' | 'key' | 'evt' | 'lnk' | 'dom' | 'wh' | 'dlv' | 'tag' | 'fld' | 'ipl' | 'cnv' | 'rpt' | 'alr' | 'alf' | 'pln' | 'pmt' | 'rfd' | 'po' | 'usr' | 'ses' | 'inv' | 'mbr' | 'imp';

/** Resource ids are prefixed by kind (`ws_…`, `key_…`) so a misplaced id is obvious in logs and support tickets. */
export function newId(kind: IdKind): string {
  return `${kind}_${randomBase62(20)}`;
}
