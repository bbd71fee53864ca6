// `linkplane import <source> ...`: starts an import job through the API (LINKPLANE_API_URL, LINKPLANE_API_KEY) and
// follows it to its end: a progress bar when stdout is a terminal, JSON lines when it is piped (one per change of
// progress, then each row error, then the job as it ended). Exit code 0 when the job succeeded, 1 otherwise.
import { readFile } from 'node:fs/promises';
import type { Import } from '../imports/import.schemas.ts';
import { SOURCE_KINDS } from '../imports/source.ts';
import { ApiClient, ApiRefusal, apiBase } from './api-client.ts';

export { ApiRefusal };

export const IMPORT_USAGE = `  import <source> [--token T] [--base-url URL] [--file PATH] [--param NAME=VALUE ...] [--dry-run]
         [--domains create|default] [--on-slug-clash error|suffix] [--no-wait]
                        import links from ${SOURCE_KINDS.join(', ')} through the API (LINKPLANE_API_URL, default
                        http://127.0.0.1:8080, and LINKPLANE_API_KEY, a key with links:write); a progress bar on a
                        terminal, JSON lines when piped`;

export interface ImportFlags {
  token?: string | undefined;
  'base-url'?: string | undefined;
  file?: string | undefined;
  param?: string[] | undefined;
  'dry-run'?: boolean | undefined;
  domains?: string | undefined;
  'on-slug-clash'?: string | undefined;
  'no-wait'?: boolean | undefined;
}

export interface ImportIo {
  env: Record<string, string | undefined>;
  /** A terminal: draw a bar on it. Otherwise JSON lines are written. */
  tty: boolean;
  write: (text: string) => void;
  /** Milliseconds between two looks at the job. */
  pollMs?: number;
}

/** What the command reads of a job: the API's own shape (one schema source). */
type Job = Pick<Import, 'id' | 'status' | 'total' | 'done' | 'created' | 'skipped' | 'failed' | 'error'>;

/** Thrown for a refused command line; the caller prints it with the usage. */
export class ImportUsageError extends Error {}

export async function runImport(source: string | undefined, flags: ImportFlags, io: ImportIo): Promise<number> {
  if (!source) throw new ImportUsageError('missing <source>');
  const key = io.env.LINKPLANE_API_KEY;
  if (!key) throw new ImportUsageError('LINKPLANE_API_KEY must hold an API key with links:write');
  const params: Record<string, string> = {};
  for (const pair of flags.param ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new ImportUsageError(`--param takes NAME=VALUE, not ${JSON.stringify(pair)}`);
    params[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const body = {
    source,
    ...(flags.token !== undefined ? { token: flags.token } : {}),
    ...(flags['base-url'] !== undefined ? { base_url: flags['base-url'] } : {}),
    ...(flags.file !== undefined ? { file: await readFile(flags.file, 'utf8') } : {}),
    ...(Object.keys(params).length > 0 ? { params } : {}),
    ...(flags['dry-run'] ? { dry_run: true } : {}),
    ...(flags.domains !== undefined ? { domains: flags.domains } : {}),
    ...(flags['on-slug-clash'] !== undefined ? { on_slug_clash: flags['on-slug-clash'] } : {}),
  };
  const client = new ApiClient(apiBase(io.env), key);
  const api = (method: string, path: string, payload?: unknown): Promise<unknown> => client.json(method, path, payload);

  let job = (await api('POST', '/imports', body)) as Job;
  const view = io.tty ? new Bar(io.write) : new Lines(io.write);
  view.show(job);
  if (flags['no-wait']) return 0;
  while (!['succeeded', 'failed', 'canceled'].includes(job.status)) {
    await new Promise((resolve) => setTimeout(resolve, io.pollMs ?? 500));
    job = (await api('GET', `/imports/${job.id}`)) as Job;
    view.show(job);
  }
  let cursor: string | null = null;
  do {
    const page = (await api('GET', `/imports/${job.id}/errors?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)) as {
      data: Array<Record<string, unknown>>;
      pagination: { next_cursor: string | null };
    };
    for (const row of page.data) view.rowError(row);
    cursor = page.pagination.next_cursor;
  } while (cursor);
  view.end(job);
  return job.status === 'succeeded' ? 0 : 1;
}

const progressOf = (job: Job) => ({ id: job.id, status: job.status, total: job.total, done: job.done, created: job.created, skipped: job.skipped, failed: job.failed });

/** JSON lines: a `progress` line when the figures change, a `row_error` line per failed row, an `import` line at the end. */
class Lines {
  private last = '';
  private readonly write: (text: string) => void;
  constructor(write: (text: string) => void) {
    this.write = write;
  }
  show(job: Job): void {
    const line = JSON.stringify({ type: 'progress', ...progressOf(job) });
    if (line !== this.last) this.write(`${line}\n`);
    this.last = line;
  }
  rowError(row: Record<string, unknown>): void {
    this.write(`${JSON.stringify({ type: 'row_error', ...row })}\n`);
  }
  end(job: Job): void {
    this.write(`${JSON.stringify({ type: 'import', ...job })}\n`);
  }
}

const WIDTH = 30;

/** One line redrawn in place: the bar (when the source says its total), the counts, the status. */
class Bar {
  private readonly write: (text: string) => void;
  private readonly errors: string[] = [];
  constructor(write: (text: string) => void) {
    this.write = write;
  }
  show(job: Job): void {
    const share = job.total ? Math.min(1, job.done / job.total) : null;
    const filled = share === null ? 0 : Math.round(share * WIDTH);
    const bar = share === null ? '' : `[${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${Math.round(share * 100)}% `;
    const of = job.total === null ? '' : `/${job.total}`;
    this.write(`\r\x1b[2K${bar}${job.done}${of} rows · ${job.created} created · ${job.skipped} skipped · ${job.failed} failed · ${job.status}`);
  }
  rowError(row: Record<string, unknown>): void {
    this.errors.push(`  ${String(row.ref)}: ${String(row.code)}: ${String(row.message)}`);
  }
  end(job: Job): void {
    this.show(job);
    this.write('\n');
    if (job.error) this.write(`import failed: ${job.error.code}: ${job.error.message}\n`);
    if (this.errors.length > 0) this.write(`rows not imported:\n${this.errors.join('\n')}\n`);
    this.write(`import ${job.id}\n`);
  }
}
