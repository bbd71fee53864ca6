// Tags and folders: the workspace-scoped labels a link refers to through `tag_ids` and `folder_id`.
import { Type, type Static } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;

const TagName = Type.String({ minLength: 1, maxLength: 50 });
const TagColor = Type.Unsafe<string | null>({ type: ['string', 'null'], pattern: '^#[0-9a-fA-F]{6}$', description: '`#rrggbb`, or null for none' });
const FolderName = Type.String({ minLength: 1, maxLength: 100 });

export const TagSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    color: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { ...closed, $id: 'Tag' },
);
export type Tag = Static<typeof TagSchema>;

export const TagCreateSchema = Type.Object({ name: TagName, color: Type.Optional(TagColor) }, closed);
export type TagCreate = Static<typeof TagCreateSchema>;

export const TagUpdateSchema = Type.Object({ name: Type.Optional(TagName), color: Type.Optional(TagColor) }, { ...closed, minProperties: 1 });
export type TagUpdate = Static<typeof TagUpdateSchema>;

export const TagListSchema = Type.Object({ data: Type.Array(TagSchema) }, closed);
export type TagList = Static<typeof TagListSchema>;

export const FolderSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
  },
  { ...closed, $id: 'Folder' },
);
export type Folder = Static<typeof FolderSchema>;

export const FolderCreateSchema = Type.Object({ name: FolderName }, closed);
export type FolderCreate = Static<typeof FolderCreateSchema>;

export const FolderUpdateSchema = Type.Object({ name: FolderName }, closed);
export type FolderUpdate = Static<typeof FolderUpdateSchema>;

export const FolderListSchema = Type.Object({ data: Type.Array(FolderSchema) }, closed);
export type FolderList = Static<typeof FolderListSchema>;
