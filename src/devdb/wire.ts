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

function writeHeader(out: Buffer, length: number, responseTo: number, opCode: number): void {
  out.writeInt32LE(length, 0);
  out.writeInt32LE(nextRequestId++ & 0x7fffffff, 4);
  out.writeInt32LE(responseTo, 8);
  out.writeInt32LE(opCode, 12);
}

/** A stored document's BSON, sent as it is inside a reply (a find's batch) instead of decoded and encoded again. */
export class RawDoc {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
}

/**
 * Whether a reply holds raw documents where cursors put them (reply.cursor.firstBatch[i]): checks that deep only. A
 * batch may mix them with decoded documents (a projection the stored bytes cannot answer for some documents).
 */
function holdsRaw(v: unknown, depth: number): boolean {
  if (v instanceof RawDoc) return true;
  if (depth === 0) return false;
  if (Array.isArray(v)) return v.some((item) => holdsRaw(item, depth - 1));
  if (isPlainObject(v)) {
    for (const k in v) if (holdsRaw(v[k], depth - 1)) return true;
  }
  return false;
}

const TYPE_DOCUMENT = '\x03';
const TYPE_ARRAY = '\x04';

/**
 * A reply body laid out before it is written: bytes to copy (encoded values, stored documents), strings written as
 * UTF-8 (an element's type, name and NUL), and int32s (a document's size, known once its elements are laid out).
 */
type Part = Uint8Array | string | number;

/**
 * Lays out a document some of whose values are RawDoc: those are copied in as they are stored, every other value is
 * encoded by bson. Returns the document's size. Nothing is joined here: the parts are copied once, into the reply.
 */
function layout(doc: Doc | unknown[], parts: Part[]): number {
  const at = parts.length;
  parts.push(0);
  let size = 5;
  const keys = Array.isArray(doc) ? doc.map((_, i) => String(i)) : Object.keys(doc);
  const values = doc as Record<string, unknown>;
  for (const key of keys) {
    const value = values[key];
    if (value === undefined) continue;
    if (value instanceof RawDoc) {
      const head = `${TYPE_DOCUMENT}${key}\0`;
      parts.push(head, value.bytes);
      size += Buffer.byteLength(head) + value.bytes.length;
    } else if ((Array.isArray(value) || isPlainObject(value)) && holdsRaw(value, 2)) {
      const head = `${Array.isArray(value) ? TYPE_ARRAY : TYPE_DOCUMENT}${key}\0`;
      parts.push(head);
      size += Buffer.byteLength(head) + layout(value as Doc | unknown[], parts);
    } else {
      const element = serialize({ [key]: value }, { ignoreUndefined: true });
      const part = element.subarray(4, element.length - 1);
      parts.push(part);
      size += part.length;
    }
  }
  parts.push('\0');
  parts[at] = size;
  return size;
}

function layoutBody(doc: Doc): { parts: Part[]; size: number } {
  if (!holdsRaw(doc, 3)) {
    const body = serialize(doc, { ignoreUndefined: true });
    return { parts: [body], size: body.length };
  }
  const parts: Part[] = [];
  return { parts, size: layout(doc, parts) };
}

function copyParts(out: Buffer, offset: number, parts: readonly Part[]): void {
  for (const part of parts) {
    if (typeof part === 'number') offset = out.writeInt32LE(part, offset);
    else if (typeof part === 'string') offset += out.write(part, offset, 'utf8');
    else {
      out.set(part, offset);
      offset += part.length;
    }
  }
}

/** Where replies are written: `take` a buffer of at least `size` bytes, `give` it back once the socket wrote it. */
export interface ReplyBuffers {
  take(size: number): Buffer;
  give(reply: Buffer): void;
}

/** Fresh memory for every reply: for callers that keep what they encode. */
export const FRESH_BUFFERS: ReplyBuffers = { take: (size) => Buffer.allocUnsafe(size), give: () => {} };

const SLAB_BYTES = 128 * 1024;
const MAX_FREE_SLABS = 32;
/** Larger replies (a cursor batch of raw clicks is about a megabyte) take a buffer of the next power of two, up to this. */
const MAX_LARGE_BYTES = 16 * 1024 * 1024;
/** At most this many bytes of large buffers wait to be used again; past it, a written one is left to the collector. */
const MAX_FREE_LARGE_BYTES = 16 * 1024 * 1024;

/**
 * Reply buffers used again once written. A page of 50 links is a reply of some 40 KB: allocated afresh for every
 * reply, that is megabytes a second of memory outside the JavaScript heap, and each few megabytes of it make V8
 * run a full collection of a heap that holds every stored document. Replies up to SLAB_BYTES are written into one
 * of a few slabs instead, each given back when the socket has written it (a failed write keeps it). Larger replies
 * (an export's cursor batches, a megabyte each) are written into buffers of a power-of-two size, kept the same way
 * up to MAX_FREE_LARGE_BYTES: allocated afresh, a million exported clicks made devdb spend more time collecting its
 * heap than answering.
 */
export class ReplySlabs implements ReplyBuffers {
  private readonly free: Buffer[] = [];
  /** Free large buffers by size (a power of two). */
  private readonly large = new Map<number, Buffer[]>();
  private freeLargeBytes = 0;

  take(size: number): Buffer {
    if (size <= SLAB_BYTES) return this.free.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
    if (size > MAX_LARGE_BYTES) return Buffer.allocUnsafe(size);
    const bytes = 2 ** Math.ceil(Math.log2(size));
    const kept = this.large.get(bytes)?.pop();
    if (!kept) return Buffer.allocUnsafeSlow(bytes);
    this.freeLargeBytes -= bytes;
    return kept;
  }

  give(reply: Buffer): void {
    const slab = reply.buffer;
    if (reply.byteOffset !== 0) return;
    if (slab.byteLength === SLAB_BYTES) {
      if (this.free.length < MAX_FREE_SLABS) this.free.push(Buffer.from(slab, 0, SLAB_BYTES));
      return;
    }
    const bytes = slab.byteLength;
    // Only buffers this class made: a power of two in the large range (a Buffer.allocUnsafe of an odd size is not).
    if (bytes <= SLAB_BYTES || bytes > MAX_LARGE_BYTES || (bytes & (bytes - 1)) !== 0) return;
    // Room is made by dropping smaller buffers: a cursor's first batch (a couple of megabytes) waiting here kept
    // out the 16 MB one of its next batch, allocated afresh for every 90-day time series in New York at 10 M clicks
    // (11 MB of rollup parts): megabytes outside the heap that had V8 collect all of devdb's every few requests.
    for (let size = SLAB_BYTES * 2; size < bytes && this.freeLargeBytes + bytes > MAX_FREE_LARGE_BYTES; size *= 2) {
      const smaller = this.large.get(size);
      while (smaller && smaller.length > 0 && this.freeLargeBytes + bytes > MAX_FREE_LARGE_BYTES) {
        smaller.pop();
        this.freeLargeBytes -= size;
      }
    }
    if (this.freeLargeBytes + bytes > MAX_FREE_LARGE_BYTES) return;
    let list = this.large.get(bytes);
    if (!list) this.large.set(bytes, (list = []));
    list.push(Buffer.from(slab, 0, bytes));
    this.freeLargeBytes += bytes;
  }

  /** Buffers waiting to be used again (slabs and large ones). */
  get size(): number {
    let large = 0;
    for (const list of this.large.values()) large += list.length;
    return this.free.length + large;
  }
}

export function encodeMsg(responseTo: number, doc: Doc, buffers: ReplyBuffers = FRESH_BUFFERS): Buffer {
  const { parts, size } = layoutBody(doc);
  const length = HEADER + 5 + size;
  const out = buffers.take(length);
  writeHeader(out, length, responseTo, OP_MSG);
  out.writeUInt32LE(0, HEADER); // flagBits
  out[HEADER + 4] = 0; // section kind 0: the body
  copyParts(out, HEADER + 5, parts);
  return out.subarray(0, length);
}

export function encodeReply(responseTo: number, doc: Doc, buffers: ReplyBuffers = FRESH_BUFFERS): Buffer {
  const { parts, size } = layoutBody(doc);
  const length = HEADER + 20 + size;
  const out = buffers.take(length);
  writeHeader(out, length, responseTo, OP_REPLY);
  // responseFlags, cursorID (int64), startingFrom, numberReturned
  out.fill(0, HEADER, HEADER + 16);
  out.writeInt32LE(1, HEADER + 16);
  copyParts(out, HEADER + 20, parts);
  return out.subarray(0, length);
}
