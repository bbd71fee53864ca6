// Abuse reports (spec 1, tag Reports): anyone may report a short link (the form on the redirect domains, or the
// public filing endpoint); the workspace owning the link reviews and resolves them.
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, Integer, Nullable, PaginationSchema, StringEnum, Text, closed } from '../platform/schema.ts';

export const REPORT_REASONS = ['phishing', 'malware', 'spam', 'scam', 'illegal', 'copyright', 'other'] as const;
export type ReportReason = (typeof REPORT_REASONS)[number];
export const REPORT_ACTIONS = ['dismiss', 'warn', 'disable'] as const;
export type ReportAction = (typeof REPORT_ACTIONS)[number];
export const REPORT_STATUSES = ['open', 'resolved'] as const;

export const MAX_DETAILS_CHARS = 2000;

const Reason = StringEnum(REPORT_REASONS, { description: 'What is wrong with the link' });
const Details = Text(0, MAX_DETAILS_CHARS, { description: 'What the reporter saw' });
const Contact = Type.String({ format: 'email', maxLength: 254, description: 'Where the reporter may be reached (optional)' });

export const ReportFileSchema = Type.Object(
  {
    short_url: Type.String({ format: 'uri', maxLength: 2048, description: 'The short link reported, as it was seen (https://<short domain>/<slug>)' }),
    reason: Reason,
    details: Type.Optional(Details),
    reporter_contact: Type.Optional(Contact),
  },
  { ...closed, $id: 'ReportFile' },
);
export type ReportFile = Static<typeof ReportFileSchema>;

/** What the form on the redirect domain posts (the link is the page's own). */
export const ReportFormSchema = Type.Object(
  { reason: Reason, details: Type.Optional(Details), reporter_contact: Type.Optional(Contact) },
  { ...closed, $id: 'ReportForm' },
);

export const ReportFiledSchema = Type.Object(
  { id: Type.String({ description: 'Prefix `rpt_`' }), status: Type.Literal('open'), created_at: DateTime() },
  { ...closed, $id: 'ReportFiled', description: 'What a reporter is told: the report exists; nothing about the link or its owner' },
);

export const ReportResolutionSchema = Type.Object(
  {
    action: StringEnum(REPORT_ACTIONS),
    note: Nullable(Type.String()),
    resolved_at: DateTime(),
  },
  closed,
);

export const ReportSchema = Type.Object(
  {
    id: Type.String(),
    link_id: Type.String(),
    short_url: Type.String(),
    destination: Type.String({ description: 'The link destination when the report was filed' }),
    reason: Reason,
    details: Nullable(Type.String()),
    reporter_contact: Nullable(Type.String()),
    source: StringEnum(['form', 'api'] as const, { description: '`form`: the page on the redirect domain; `api`: POST /v1/public/reports' }),
    status: StringEnum(REPORT_STATUSES),
    resolution: Nullable(ReportResolutionSchema),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { ...closed, $id: 'Report' },
);
export type Report = Static<typeof ReportSchema>;

export const ReportResolveSchema = Type.Object(
  {
    action: StringEnum(REPORT_ACTIONS, {
      description:
        '`dismiss`: nothing wrong (and lifts a warning or disabling this report had set); `warn`: visitors see a warning page first, ' +
        'naming the reason, and may continue; `disable`: the link answers 410 with a notice',
    }),
    note: Type.Optional(Text(1, 1000, { description: 'For the workspace’s own records' })),
  },
  { ...closed, $id: 'ReportResolve' },
);
export type ReportResolve = Static<typeof ReportResolveSchema>;

export const ReportListQuerySchema = Type.Object(
  {
    cursor: Type.Optional(Text(1, 500, { description: 'The next_cursor of the previous page, unchanged' })),
    limit: Integer(1, 100, { default: 50 }),
    status: Type.Optional(StringEnum(REPORT_STATUSES)),
    link_id: Type.Optional(Text(3, 64)),
  },
  closed,
);
export type ReportListQuery = Static<typeof ReportListQuerySchema>;

export const ReportListSchema = Type.Object({ data: Type.Array(ReportSchema), pagination: PaginationSchema }, { ...closed, $id: 'ReportList' });
