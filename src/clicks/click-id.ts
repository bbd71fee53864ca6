// Click ids travel through the visitor's browser to the customer's site and come back with a conversion, so they
// must be unforgeable, bound to the workspace that issued them, and carry their own age: a conversion can then be
// checked without a database read (spec 9: `invalid_click_id`, `attribution_expired`).
import { createHmac, hash, hkdfSync, randomFillSync, timingSafeEqual } from 'node:crypto';

const PREFIX = 'clk_';
const VERSION = 1;
/** version (1) + issued-at Unix seconds (4, big-endian) + random (8). */
const PAYLOAD_BYTES = 13;
/** 96 bits of HMAC-SHA256: forging one id takes 2^96 tries on average. */
const MAC_BYTES = 12;
const PAYLOAD_CHARS = Math.ceil((PAYLOAD_BYTES * 4) / 3);
const MAC_CHARS = Math.ceil((MAC_BYTES * 4) / 3);
const ID_LENGTH = PREFIX.length + PAYLOAD_CHARS + 1 + MAC_CHARS;
/** Random bytes are drawn from a pool refilled in one call, not one system call per redirect. */
const POOL_BYTES = 8 * 512;
const BLOCK = 64;
/** Workspace ids up to this many bytes take the fast HMAC path. */
const FAST_ID_BYTES = 128;

export type ClickIdCheck = { ok: true; issuedAt: Date } | { ok: false; reason: 'invalid' | 'expired' };

/** Issues and verifies signed click ids: `clk_<base64url payload>.<base64url mac>`. */
export class ClickIds {
  private readonly key: Buffer;
  private readonly pool = Buffer.allocUnsafe(POOL_BYTES);
  private poolOffset = POOL_BYTES;
  /** (key ⊕ ipad) ‖ payload ‖ workspace id, and (key ⊕ opad) ‖ inner digest: HMAC (RFC 2104) with reused buffers. */
  private readonly inner = Buffer.alloc(BLOCK + PAYLOAD_BYTES + FAST_ID_BYTES);
  private readonly outer = Buffer.alloc(BLOCK + 32);

  /** `secretKey` is the installation secret; the MAC key is derived from it for this purpose only. */
  constructor(secretKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'linkplane click-id', 32));
    for (let i = 0; i < BLOCK; i++) {
      const k = i < this.key.length ? this.key[i]! : 0;
      this.inner[i] = k ^ 0x36;
      this.outer[i] = k ^ 0x5c;
    }
  }

  private readonly plainPrefix = `${PREFIX}u${randomFillSync(Buffer.alloc(9)).toString('base64url')}`;
  private plainCounter = 0;

  /**
   * The id of a click no conversion can come back for (the workspace does not track conversions): unique across
   * processes (a random prefix per process and a counter) but unsigned, so `verify` refuses it as `invalid`. Signing
   * costs a few microseconds, most of a redirect's own work; it is spent only where it buys something.
   */
  unsigned(): string {
    return `${this.plainPrefix}${(++this.plainCounter).toString(36)}`;
  }

  issue(workspaceId: string, now: Date = new Date()): string {
    const payload = Buffer.allocUnsafe(PAYLOAD_BYTES);
    payload[0] = VERSION;
    payload.writeUInt32BE(Math.floor(now.getTime() / 1000) >>> 0, 1);
    if (this.poolOffset >= POOL_BYTES) {
      randomFillSync(this.pool);
      this.poolOffset = 0;
    }
    this.pool.copy(payload, 5, this.poolOffset, this.poolOffset + 8);
    this.poolOffset += 8;
    return `${PREFIX}${payload.toString('base64url')}.${this.mac(payload, workspaceId).toString('base64url')}`;
  }

  /**
   * `invalid` for anything not issued by us for this workspace (garbage, tampered, another workspace's id);
   * `expired` for a genuine id older than `maxAgeMs`.
   */
  verify(id: string, workspaceId: string, now: Date, maxAgeMs: number): ClickIdCheck {
    if (typeof id !== 'string' || id.length !== ID_LENGTH || !id.startsWith(PREFIX) || id[PREFIX.length + PAYLOAD_CHARS] !== '.') {
      return { ok: false, reason: 'invalid' };
    }
    const payload = decode(id.slice(PREFIX.length, PREFIX.length + PAYLOAD_CHARS), PAYLOAD_BYTES);
    const mac = decode(id.slice(PREFIX.length + PAYLOAD_CHARS + 1), MAC_BYTES);
    if (!payload || !mac || payload[0] !== VERSION) return { ok: false, reason: 'invalid' };
    if (!timingSafeEqual(mac, this.mac(payload, workspaceId))) return { ok: false, reason: 'invalid' };
    const issuedAt = new Date(payload.readUInt32BE(1) * 1000);
    if (now.getTime() - issuedAt.getTime() > maxAgeMs) return { ok: false, reason: 'expired' };
    return { ok: true, issuedAt };
  }

  /**
   * HMAC-SHA256(key, payload ‖ workspace id), truncated. The workspace id follows the fixed-length payload, so no
   * two (payload, workspace) pairs share an input. Built from two one-shot hashes over preallocated buffers: it runs
   * on every redirect, and a `createHmac` object costs several times more.
   */
  private mac(payload: Buffer, workspaceId: string): Buffer {
    if (Buffer.byteLength(workspaceId) > FAST_ID_BYTES) {
      return createHmac('sha256', this.key).update(payload).update(workspaceId).digest().subarray(0, MAC_BYTES);
    }
    payload.copy(this.inner, BLOCK);
    const end = BLOCK + PAYLOAD_BYTES + this.inner.write(workspaceId, BLOCK + PAYLOAD_BYTES);
    hash('sha256', this.inner.subarray(0, end), 'buffer').copy(this.outer, BLOCK);
    return hash('sha256', this.outer, 'buffer').subarray(0, MAC_BYTES);
  }
}

/** Strict base64url: the decoded bytes must re-encode to the same text, so no two spellings of one id verify. */
function decode(text: string, bytes: number): Buffer | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const buffer = Buffer.from(text, 'base64url');
  if (buffer.length !== bytes || buffer.toString('base64url') !== text) return null;
  return buffer;
}
