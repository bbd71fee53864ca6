// The import jobs API (docs/importing/README.md): the request and response shapes the router validates with and the
// OpenAPI document and the tool server's tools are generated from.
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, HttpUrl, Integer, Nullable, StringEnum, Text, closed } from '../platform/schema.ts';
import { SOURCE_KINDS } from './source.ts';

export const IMPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];

/** The file sources: they read an uploaded export instead of calling a service. */
export const FILE_SOURCES: readonly string[] = ['shlink_csv', 'csv'];

const ParamName = '^[a-z][a-z0-9_]{0,39}$';

export const ImportCreateSchema = Type.Object(
  {
    source: StringEnum(SOURCE_KINDS, { description: 'The service or file format to read' }),
    token: Type.Optional(
      Text(1, 4096, { description: "The service's API token or key (Bitly's access token, Dub's API key, YOURLS's signature...). Write-only: stored encrypted, never returned" }),
    ),
    base_url: Type.Optional(
      HttpUrl(2048, { description: 'Base URL of a self-hosted service (Shlink, Kutt, YOURLS), or of an API on another host. Write-only, stored encrypted' }),
    ),
    params: Type.Optional(
      Type.Unsafe<Record<string, string>>({
        type: 'object',
        patternProperties: { [ParamName]: { type: 'string', minLength: 1, maxLength: 500 } },
        additionalProperties: false,
        maxProperties: 10,
        description: "Per-source options (Bitly's `group` and `clicks`, Rebrandly's `workspace`, Short.io's `domain`...); see docs/importing/<source>.md",
      }),
    ),
    file: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64 * 1_048_576,
        description:
          'For file sources (`shlink_csv`, `csv`): the whole export file as text (UTF-8), in the JSON body. The request body as a whole is bounded by BODY_LIMIT_BYTES (1 MiB by default; 413 beyond). Write-only, stored encrypted',
      }),
    ),
    dry_run: Type.Boolean({ default: false, description: 'Read the whole source and count what would be created and what would fail, writing no link' }),
    domains: StringEnum(['create', 'default'] as const, {
      default: 'create',
      description:
        "`create`: a link on a custom domain of the source goes on the workspace's domain of that host name, connected now (pending verification) when missing; `default`: every link goes on the default short domain. Links on a service's shared domain (bit.ly, dub.sh...) always go on the default domain",
    }),
    on_slug_clash: StringEnum(['error', 'suffix'] as const, {
      default: 'error',
      description: '`error`: a slug already taken on its domain fails that row; `suffix`: the link gets the slug with `-2`, `-3`... appended',
    }),
  },
  { ...closed, $id: 'ImportCreate' },
);
export type ImportCreate = Static<typeof ImportCreateSchema>;

const Count = Integer(0, Number.MAX_SAFE_INTEGER);

export const ImportSchema = Type.Object(
  {
    id: Type.String(),
    source: StringEnum(SOURCE_KINDS),
    status: StringEnum(IMPORT_STATUSES, { description: 'queued → running → succeeded, failed or canceled' }),
    dry_run: Type.Boolean(),
    domains: StringEnum(['create', 'default'] as const),
    on_slug_clash: StringEnum(['error', 'suffix'] as const),
    params: Type.Record(Type.String(), Type.String()),
    has_token: Type.Boolean({ description: 'Whether a token was given (the token itself is never returned)' }),
    total: Nullable(Count, { description: 'Rows the source says it has; null until it says (some services never do)' }),
    done: Type.Integer({ minimum: 0, description: 'Rows read and handled so far: created + skipped + failed' }),
    created: Type.Integer({ minimum: 0, description: 'Links created (a dry run: links that would be created)' }),
    skipped: Type.Integer({ minimum: 0, description: 'Rows already imported into this workspace by an earlier import from the same source' }),
    failed: Type.Integer({ minimum: 0, description: 'Rows that could not be imported; GET /imports/{id}/errors lists them' }),
    error: Nullable(Type.Object({ code: Type.String(), message: Type.String() }, closed), { description: 'Why the job failed as a whole' }),
    created_at: DateTime(),
    started_at: Nullable(DateTime()),
    finished_at: Nullable(DateTime()),
  },
  { ...closed, $id: 'Import' },
);
export type Import = Static<typeof ImportSchema>;

const Pagination = Type.Object({ next_cursor: Nullable(Type.String()), has_more: Type.Boolean() }, closed);

export const ImportListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'The next_cursor of the previous page, unchanged' })),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  },
  closed,
);
export type ImportListQuery = Static<typeof ImportListQuerySchema>;

export const ImportListSchema = Type.Object({ data: Type.Array(ImportSchema), pagination: Pagination }, closed);
export type ImportList = Static<typeof ImportListSchema>;

export const ImportRowErrorSchema = Type.Object(
  {
    ref: Type.String({ description: "Where the row was: the source's own id of the link, or `row <n>` of a file" }),
    code: Type.String({ description: 'The API error code the row would have got (`conflict`, `validation_failed`, `plan_restricted`...), or `source_row` for a row the source could not read' }),
    message: Type.String(),
    slug: Nullable(Type.String()),
    domain: Nullable(Type.String()),
  },
  { ...closed, $id: 'ImportRowError' },
);
export type ImportRowError = Static<typeof ImportRowErrorSchema>;

export const ImportErrorListSchema = Type.Object({ data: Type.Array(ImportRowErrorSchema), pagination: Pagination }, closed);
export type ImportErrorList = Static<typeof ImportErrorListSchema>;
