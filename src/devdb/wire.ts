// MongoDB wire protocol framing: OP_MSG both ways, plus legacy OP_QUERY → OP_REPLY because the
// driver's first handshake (hello/isMaster on admin.$cmd) still uses it.
import { deserialize, serialize } from 'bson';
import { isPlainObject, normalizeIncoming, type Doc } from './values.ts';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_MSG = 2013;
const HEADER = 16;
const MAX_MESSAGE = 48_000_000;
const CHECKSUM_PRESENT = 1;
export const MORE_TO_COME = 2;

export class ProtocolError extends Error {}

export type Request =
  | { kind: 'msg'; requestId: number; flags: number; command: Doc }
  | { kind: 'query'; requestId: number; collection: string; command: Doc };

/**
 * Splits a byte stream into whole messages. The chunks of a message are kept apart until it is complete and joined
 * once: joining every chunk onto the bytes received so far copied a large message (a bulk write of big documents
 * arrives in hundreds of socket chunks) over and over, quadratic in its size.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Length of the message being received, once its first four bytes are in; -1 before. */
  private expected = -1;

  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.size += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      if (this.expected < 0) {
        if (this.size < 4) break;
        if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks, this.size)];
        const length = this.chunks[0]!.readInt32LE(0);
        if (length < HEADER || length > MAX_MESSAGE) throw new ProtocolError(`invalid message length ${length}`);
        this.expected = length;
      }
      if (this.size < this.expected) break;
      const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
      frames.push(all.subarray(0, this.expected));
      const rest = all.subarray(this.expected);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.size = rest.length;
      this.expected = -1;
    }
    return frames;
  }
}

function readDoc(buf: Buffer, offset: number, end: number): [Doc, number] {
  if (offset + 5 > end) throw new ProtocolError('truncated document');
  const size = buf.readInt32LE(offset);
  if (size < 5 || offset + size > end) throw new ProtocolError('invalid document size');
  const doc = deserialize(buf.subarray(offset, offset + size), { promoteValues: false });
  return [normalizeIncoming(doc) as Doc, offset + size];
}

function readCString(buf: Buffer, offset: number, end: number): [string, number] {
  const zero = buf.indexOf(0, offset);
  if (zero < 0 || zero >= end) throw new ProtocolError('unterminated string');
  return [buf.toString('utf8', offset, zero), zero + 1];
}

function parseMsg(frame: Buffer, requestId: number): Request {
  const flags = frame.readUInt32LE(HEADER);
  const end = flags & CHECKSUM_PRESENT ? frame.length - 4 : frame.length;
  let offset = HEADER + 4;
  let body: Doc | undefined;
  const sequences: [string, Doc[]][] = [];
  while (offset < end) {
    const kind = frame.readUInt8(offset++);
    if (kind === 0) {
      [body, offset] = readDoc(frame, offset, end);
    } else if (kind === 1) {
      const size = frame.readInt32LE(offset);
      const sectionEnd = offset + size;
      if (size < 5 || sectionEnd > end) throw new ProtocolError('invalid document sequence size');
      const [identifier, start] = readCString(frame, offset + 4, sectionEnd);
      let pos = start;
      const docs: Doc[] = [];
      while (pos < sectionEnd) {
        let doc: Doc;
        [doc, pos] = readDoc(frame, pos, sectionEnd);
        docs.push(doc);
      }
      sequences.push([identifier, docs]);
      offset = sectionEnd;
    } else {
      throw new ProtocolError(`unknown OP_MSG section kind ${kind}`);
    }
  }
  if (!body) throw new ProtocolError('OP_MSG without a body section');
  // Document sequences (insert's `documents`, update's `updates`, ...) are command fields.
  for (const [identifier, docs] of sequences) {
    const prev = body[identifier];
    body[identifier] = Array.isArray(prev) ? [...(prev as Doc[]), ...docs] : docs;
  }
  return { kind: 'msg', requestId, flags, command: body };
}

function parseQuery(frame: Buffer, requestId: number): Request {
  let offset = HEADER + 4;
  const [collection, afterName] = readCString(frame, offset, frame.length);
  offset = afterName + 8;
  let [query] = readDoc(frame, offset, frame.length);
  if (query.$query && typeof query.$query === 'object') query = query.$query as Doc;
  return { kind: 'query', requestId, collection, command: query };
}

export function parseMessage(frame: Buffer): Request {
  if (frame.length < HEADER + 5) throw new ProtocolError('message too short');
  const requestId = frame.readInt32LE(4);
  const opCode = frame.readInt32LE(12);
  if (opCode === OP_MSG) return parseMsg(frame, requestId);
  if (opCode === OP_QUERY) return parseQuery(frame, requestId);
  throw new ProtocolError(`unsupported opCode ${opCode}`);
}

let nextRequestId = 1;

function header(length: number, responseTo: number, opCode: number): Buffer {
  const h = Buffer.alloc(HEADER);
  h.writeInt32LE(length, 0);
  h.writeInt32LE(nextRequestId++ & 0x7fffffff, 4);
  h.writeInt32LE(responseTo, 8);
  h.writeInt32LE(opCode, 12);
  return h;
}

/** A stored document's BSON, sent as it is inside a reply (a find's batch) instead of decoded and encoded again. */
export class RawDoc {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
}

/** Whether a reply holds raw documents where cursors put them (reply.cursor.firstBatch[i]): checks that deep only. */
function holdsRaw(v: unknown, depth: number): boolean {
  if (v instanceof RawDoc) return true;
  if (depth === 0) return false;
  if (Array.isArray(v)) return v.length > 0 && holdsRaw(v[0], depth - 1);
  if (isPlainObject(v)) {
    for (const k in v) if (holdsRaw(v[k], depth - 1)) return true;
  }
  return false;
}

const TYPE_DOCUMENT = 0x03;
const TYPE_ARRAY = 0x04;

/** BSON of a document some of whose values are RawDoc: those are copied in; every other value is encoded by bson. */
function encodeWithRaw(doc: Doc | unknown[]): Buffer {
  const parts: Uint8Array[] = [];
  let size = 5;
  const add = (part: Uint8Array) => {
    parts.push(part);
    size += part.length;
  };
  const entries: [string, unknown][] = Array.isArray(doc) ? doc.map((v, i) => [String(i), v]) : Object.entries(doc);
  for (const [key, value] of entries) {
    if (value === undefined) continue;
    if (value instanceof RawDoc || (holdsRaw(value, 2) && (Array.isArray(value) || isPlainObject(value)))) {
      const name = Buffer.from(`${key}\0`, 'utf8');
      add(Buffer.of(value instanceof RawDoc ? TYPE_DOCUMENT : Array.isArray(value) ? TYPE_ARRAY : TYPE_DOCUMENT));
      add(name);
      add(value instanceof RawDoc ? value.bytes : encodeWithRaw(value as Doc | unknown[]));
    } else {
      const element = serialize({ [key]: value }, { ignoreUndefined: true });
      add(element.subarray(4, element.length - 1));
    }
  }
  const out = Buffer.allocUnsafe(size);
  out.writeInt32LE(size, 0);
  let offset = 4;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  out[offset] = 0;
  return out;
}

function encodeBody(doc: Doc): Uint8Array {
  return holdsRaw(doc, 3) ? encodeWithRaw(doc) : serialize(doc, { ignoreUndefined: true });
}

export function encodeMsg(responseTo: number, doc: Doc): Buffer {
  const body = encodeBody(doc);
  const prefix = Buffer.alloc(5); // flagBits (0) + section kind 0
  return Buffer.concat([header(HEADER + 5 + body.length, responseTo, OP_MSG), prefix, body]);
}

export function encodeReply(responseTo: number, doc: Doc): Buffer {
  const body = encodeBody(doc);
  const fields = Buffer.alloc(20); // responseFlags, cursorID (int64), startingFrom, numberReturned
  fields.writeInt32LE(1, 16);
  return Buffer.concat([header(HEADER + 20 + body.length, responseTo, OP_REPLY), fields, body]);
}
