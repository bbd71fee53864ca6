// A minimal writer of the MaxMind DB format, version 2 (maxmind.github.io/MaxMind-DB), so tests can build small
// GeoIP databases and read them back with the `maxmind` library the redirect uses. It covers what GeoIP2 files
// use: a binary search tree with 24-, 28- or 32-bit records (IPv4-only, or IPv6 with IPv4 under ::/96), a data
// section of maps, arrays, strings, booleans, integers and doubles (each distinct record written once), and the
// metadata map after the "\xAB\xCD\xEFMaxMind.com" marker.
import { writeFile } from 'node:fs/promises';
import ipaddr from 'ipaddr.js';

export type MmdbValue = string | number | bigint | boolean | MmdbValue[] | { [key: string]: MmdbValue };

export interface MmdbEntry {
  /** CIDR, IPv4 or IPv6 ("203.0.113.0/24", "2001:db8::/32"). A later entry inside an earlier one overrides it there. */
  network: string;
  data: { [key: string]: MmdbValue };
}

export interface MmdbOptions {
  databaseType?: string;
  ipVersion?: 4 | 6;
  recordSize?: 24 | 28 | 32;
  languages?: string[];
  description?: Record<string, string>;
  buildEpoch?: number;
}

const TYPE = { pointer: 1, string: 2, double: 3, bytes: 4, uint16: 5, uint32: 6, map: 7, int32: 8, uint64: 9, uint128: 10, array: 11, boolean: 14 } as const;
const METADATA_MARKER = Buffer.from([0xab, 0xcd, 0xef, ...Buffer.from('MaxMind.com', 'ascii')]);
const DATA_SECTION_SEPARATOR = 16;

interface Node {
  children: [Child, Child];
}
type Child = Node | { data: number } | null;
type Bit = 0 | 1;

export function buildMmdb(entries: MmdbEntry[], options: MmdbOptions = {}): Buffer {
  const ipVersion = options.ipVersion ?? 6;
  const recordSize = options.recordSize ?? 28;

  const records: Buffer[] = [];
  const recordIndex = new Map<string, number>();
  const root: Node = { children: [null, null] };
  for (const entry of entries) {
    const encoded = encode(entry.data);
    const key = encoded.toString('base64');
    let index = recordIndex.get(key);
    if (index === undefined) {
      index = records.length;
      records.push(encoded);
      recordIndex.set(key, index);
    }
    const { bits, prefix } = networkBits(entry.network, ipVersion);
    insert(root, bits, prefix, index);
  }

  const offsets: number[] = [];
  let dataSize = 0;
  for (const record of records) {
    offsets.push(dataSize);
    dataSize += record.length;
  }

  const nodes = numberNodes(root);
  const nodeCount = nodes.size;
  const maxRecord = 2 ** recordSize - 1;
  const recordValue = (child: Child): number => {
    if (child === null) return nodeCount;
    if ('children' in child) return nodes.get(child)!;
    return nodeCount + DATA_SECTION_SEPARATOR + offsets[child.data]!;
  };
  const nodeBytes = recordSize / 4;
  const tree = Buffer.alloc(nodeCount * nodeBytes);
  for (const [node, number] of nodes) {
    const left = recordValue(node.children[0]);
    const right = recordValue(node.children[1]);
    if (left > maxRecord || right > maxRecord) throw new Error(`a ${recordSize}-bit record cannot address this database`);
    writeNode(tree, number * nodeBytes, recordSize, left, right);
  }

  const metadata = encode({
    node_count: nodeCount,
    record_size: recordSize,
    ip_version: ipVersion,
    database_type: options.databaseType ?? 'Linkplane-Test',
    languages: options.languages ?? ['en'],
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    build_epoch: BigInt(options.buildEpoch ?? Math.floor(Date.now() / 1000)),
    description: options.description ?? { en: 'Linkplane test database' },
  });
  return Buffer.concat([tree, Buffer.alloc(DATA_SECTION_SEPARATOR), ...records, METADATA_MARKER, metadata]);
}

export async function writeMmdb(path: string, entries: MmdbEntry[], options: MmdbOptions = {}): Promise<void> {
  await writeFile(path, buildMmdb(entries, options));
}

/** The network's address bits, most significant first, and its prefix length in the tree's address space. */
function networkBits(cidr: string, ipVersion: 4 | 6): { bits: Bit[]; prefix: number } {
  const [address, prefix] = ipaddr.parseCIDR(cidr);
  let bytes = address.toByteArray();
  let length = prefix;
  if (address.kind() === 'ipv4' && ipVersion === 6) {
    bytes = [...new Array<number>(12).fill(0), ...bytes];
    length += 96;
  } else if (address.kind() === 'ipv6' && ipVersion === 4) {
    throw new Error(`an IPv4 database cannot hold ${cidr}`);
  }
  if (length === 0) throw new Error('a network must have a prefix of at least one bit');
  const bits: Bit[] = [];
  for (let i = 0; i < length; i++) bits.push(((bytes[i >> 3]! >> (7 - (i & 7))) & 1) as Bit);
  return { bits, prefix: length };
}

/** Sets the subtree at the network's path to the record; a record or empty slot on the way is split in two. */
function insert(root: Node, bits: Bit[], prefix: number, data: number): void {
  let node = root;
  for (let depth = 0; depth < prefix - 1; depth++) {
    const bit = bits[depth]!;
    const child = node.children[bit];
    if (child !== null && 'children' in child) {
      node = child;
    } else {
      const split: Node = { children: [child, child] };
      node.children[bit] = split;
      node = split;
    }
  }
  node.children[bits[prefix - 1]!] = { data };
}

/** Breadth-first numbering; the root is node 0, as readers expect. */
function numberNodes(root: Node): Map<Node, number> {
  const numbers = new Map<Node, number>();
  const queue: Node[] = [root];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    numbers.set(node, i);
    for (const child of node.children) if (child !== null && 'children' in child) queue.push(child);
  }
  return numbers;
}

function writeNode(tree: Buffer, offset: number, recordSize: number, left: number, right: number): void {
  if (recordSize === 24) {
    tree.writeUIntBE(left, offset, 3);
    tree.writeUIntBE(right, offset + 3, 3);
  } else if (recordSize === 28) {
    tree.writeUIntBE(left & 0xffffff, offset, 3);
    tree[offset + 3] = (((left >>> 24) & 0x0f) << 4) | ((right >>> 24) & 0x0f);
    tree.writeUIntBE(right & 0xffffff, offset + 4, 3);
  } else {
    tree.writeUInt32BE(left, offset);
    tree.writeUInt32BE(right, offset + 4);
  }
}

function encode(value: MmdbValue): Buffer {
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([control(TYPE.string, bytes.length), bytes]);
  }
  if (typeof value === 'boolean') return control(TYPE.boolean, value ? 1 : 0);
  if (typeof value === 'bigint') return unsigned(TYPE.uint64, value);
  if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) return unsigned(value <= 0xffff ? TYPE.uint16 : TYPE.uint32, BigInt(value));
    if (Number.isInteger(value) && value < 0 && value >= -0x80000000) {
      const bytes = Buffer.alloc(4);
      bytes.writeInt32BE(value);
      return Buffer.concat([control(TYPE.int32, 4), bytes]);
    }
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleBE(value);
    return Buffer.concat([control(TYPE.double, 8), bytes]);
  }
  if (Array.isArray(value)) return Buffer.concat([control(TYPE.array, value.length), ...value.map(encode)]);
  const keys = Object.keys(value);
  return Buffer.concat([control(TYPE.map, keys.length), ...keys.flatMap((key) => [encode(key), encode(value[key]!)])]);
}

/** Big-endian with no leading zero bytes (zero is zero bytes long). */
function unsigned(type: number, value: bigint): Buffer {
  const bytes: number[] = [];
  for (let rest = value; rest > 0n; rest >>= 8n) bytes.unshift(Number(rest & 0xffn));
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
}

/** Control byte (type in the top 3 bits, size in the low 5), then the extended type byte, then extra size bytes. */
function control(type: number, size: number): Buffer {
  const extra: number[] = [];
  let sizeBits = size;
  if (size >= 65_821) {
    sizeBits = 31;
    const rest = size - 65_821;
    extra.push((rest >>> 16) & 0xff, (rest >>> 8) & 0xff, rest & 0xff);
  } else if (size >= 285) {
    sizeBits = 30;
    const rest = size - 285;
    extra.push((rest >>> 8) & 0xff, rest & 0xff);
  } else if (size >= 29) {
    sizeBits = 29;
    extra.push(size - 29);
  }
  const head = type <= 7 ? [(type << 5) | sizeBits] : [sizeBits, type - 7];
  return Buffer.from([...head, ...extra]);
}
