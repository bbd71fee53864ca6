// `linkplane export`: every link of the key's workspace, streamed from GET /v1/links/export (CSV or JSON Lines) to
// stdout or to a file, never held in memory. On a terminal, stderr shows a progress line redrawn in place; piped, stderr
// stays quiet. A refusal of the API leaves no file behind.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { ApiClient, apiBase } from './api-client.ts';

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;

export interface ExportFlags {
  format?: string | undefined;
  output?: string | undefined;
}

export interface ExportIo {
  env: Record<string, string | undefined>;
  /** Where the export goes without --output (process.stdout); left open at the end. */
  stdout: Writable;
  /** stderr is a terminal: draw the progress line there. */
  stderrTty: boolean;
  writeErr: (text: string) => void;
}

/** Thrown for a refused command line; the caller prints it with a hint. */
export class ExportUsageError extends Error {}

export async function runExport(flags: ExportFlags, io: ExportIo): Promise<number> {
  const format = flags.format ?? 'csv';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw new ExportUsageError(`--format must be csv or jsonl, not ${JSON.stringify(format)}`);
  if (flags.output === '') throw new ExportUsageError('--output needs a file name');
  const key = io.env.LINKPLANE_API_KEY;
  if (!key) throw new ExportUsageError('LINKPLANE_API_KEY must hold an API key with links:read');

  const res = await new ApiClient(apiBase(io.env), key).stream(`/links/export?format=${format}`);
  const progress = new Progress(format === 'jsonl', io.stderrTty ? io.writeErr : null);
  const source = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      progress.add(chunk);
      done(null, chunk);
    },
  });
  if (flags.output === undefined) {
    await pipeline(source, counter, io.stdout, { end: false });
  } else {
    try {
      await pipeline(source, counter, createWriteStream(flags.output));
    } catch (error) {
      await rm(flags.output, { force: true });
      throw error;
    }
  }
  progress.end(flags.output);
  return 0;
}

/** `exporting… 1,234 links · 310 KB`, redrawn at most every 100 ms; links are counted for JSON Lines (one a line). */
class Progress {
  private bytes = 0;
  private links = 0;
  private drawn = 0;
  private readonly countLinks: boolean;
  private readonly write: ((text: string) => void) | null;

  constructor(countLinks: boolean, write: ((text: string) => void) | null) {
    this.countLinks = countLinks;
    this.write = write;
  }

  add(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.countLinks) for (const byte of chunk) if (byte === 0x0a) this.links++;
    const now = Date.now();
    if (this.write && now - this.drawn >= 100) {
      this.drawn = now;
      this.write(`\r\x1b[2Kexporting… ${this.figures()}`);
    }
  }

  end(output: string | undefined): void {
    this.write?.(`\r\x1b[2Kexported ${this.figures()}${output === undefined ? '' : ` to ${output}`}\n`);
  }

  private figures(): string {
    const size = this.bytes < 1024 ? `${this.bytes} B` : this.bytes < 1024 * 1024 ? `${(this.bytes / 1024).toFixed(1)} KB` : `${(this.bytes / 1024 / 1024).toFixed(1)} MB`;
    return this.countLinks ? `${this.links.toLocaleString('en')} links · ${size}` : size;
  }
}
