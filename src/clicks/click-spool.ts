// Clicks the redirect cannot hand to NATS in time go to local disk rather than being dropped: while NATS is
// unreachable and the in-memory buffer is full, the oldest waiting clicks are written out as one segment file, and
// once NATS takes clicks again the segments are read back and published. A segment is deleted only when every click
// in it has been acknowledged by JetStream (or written into a newer segment), so a crash in between publishes some
// clicks twice, never none; the ingestion keys clicks by their id, so each is stored once.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClickRecord } from '../visitor/click-record.ts';
import { decodeClicks, encodeClicks } from './click-wire.ts';

const SUFFIX = '.clicks.json';

export interface SpoolSegment {
  readonly file: string;
  readonly bytes: number;
}

export class ClickSpool {
  readonly dir: string;
  readonly maxBytes: number;
  /** Segments on disk not yet read back, oldest first. */
  private readonly waiting: SpoolSegment[] = [];
  private bytesHeld = 0;
  private seq = 0;

  constructor(options: { dir: string; maxBytes: number }) {
    this.dir = options.dir;
    this.maxBytes = options.maxBytes;
    mkdirSync(this.dir, { recursive: true });
    this.adoptOrphans();
  }

  /** Bytes of every segment on disk (waiting or being replayed). */
  bytes(): number {
    return this.bytesHeld;
  }

  /** Segments not yet read back. */
  pending(): number {
    return this.waiting.length;
  }

  /**
   * Writes the clicks as one segment (complete or not at all: written aside, then renamed). False when the spool has
   * no room for them (the caller drops and counts them) or the disk refuses the write.
   */
  append(clicks: readonly ClickRecord[]): boolean {
    if (clicks.length === 0) return true;
    // The wire's compact form, one entry per workspace: about a third of the clicks' plain JSON.
    const groups = new Map<string, ClickRecord[]>();
    for (const click of clicks) {
      const group = groups.get(click.workspace_id);
      if (group) group.push(click);
      else groups.set(click.workspace_id, [click]);
    }
    const body = `[${[...groups].map(([workspaceId, group]) => encodeClicks(workspaceId, group)).join(',')}]`;
    const bytes = Buffer.byteLength(body);
    if (this.bytesHeld + bytes > this.maxBytes) return false;
    const name = `${String(Date.now()).padStart(14, '0')}-${process.pid}-${String(++this.seq).padStart(9, '0')}${SUFFIX}`;
    const file = join(this.dir, name);
    try {
      // Again here: a cleaner of temporary files may have removed the folder since the start.
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(`${file}.tmp`, body);
      renameSync(`${file}.tmp`, file);
    } catch {
      rmSync(`${file}.tmp`, { force: true });
      return false;
    }
    this.waiting.push({ file, bytes });
    this.bytesHeld += bytes;
    return true;
  }

  /** The oldest waiting segment and its clicks, or null; the file stays until `release`. */
  next(): { segment: SpoolSegment; clicks: ClickRecord[] } | null {
    while (this.waiting.length > 0) {
      const segment = this.waiting.shift()!;
      let clicks: ClickRecord[] | null = [];
      try {
        for (const body of JSON.parse(readFileSync(segment.file, 'utf8')) as unknown[]) {
          const decoded = decodeClicks(body);
          if (decoded === null) throw new Error('not a click message');
          clicks.push(...decoded);
        }
      } catch {
        clicks = null;
      }
      if (clicks !== null) return { segment, clicks };
      // Unreadable (or gone): nothing in it can be published; it is put aside rather than retried forever.
      this.release(segment, true);
    }
    return null;
  }

  /** Every click of the segment is acknowledged (or spooled anew): its file goes. */
  release(segment: SpoolSegment, unreadable = false): void {
    this.bytesHeld -= segment.bytes;
    try {
      if (unreadable) renameSync(segment.file, `${segment.file}.unreadable`);
      else rmSync(segment.file, { force: true });
    } catch {
      // Already gone.
    }
  }

  /**
   * Segments left by an earlier run of this process (a crash, a restart) or by a process on this host that is no
   * longer running: they are this process's to replay now.
   */
  private adoptOrphans(): void {
    const names = readdirSync(this.dir)
      .filter((name) => name.endsWith(SUFFIX))
      .sort();
    for (const name of names) {
      const pid = Number(name.split('-')[1]);
      if (pid !== process.pid && alive(pid)) continue;
      const file = join(this.dir, name);
      try {
        const bytes = statSync(file).size;
        this.waiting.push({ file, bytes });
        this.bytesHeld += bytes;
      } catch {
        // Adopted by another process meanwhile.
      }
    }
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
