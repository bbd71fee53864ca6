// IP lists (the targets of rule `match.ip_list_ids`): request and response schemas, validated by the router and
// published in the OpenAPI document from this one declaration.
import { Type, type Static } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;

export const MAX_IP_LISTS_PER_WORKSPACE = 100;
export const MAX_IP_LIST_ENTRIES = 10_000;

const Name = Type.String({ minLength: 1, maxLength: 80, description: 'A label for people' });
// The longest entry is a full IPv6 address in mixed notation with a /128 prefix: 45 + 4 characters.
const Entry = Type.String({ minLength: 2, maxLength: 49, description: 'An IPv4 or IPv6 address, or a CIDR range (`203.0.113.0/24`, `2001:db8::/32`)' });
const Entries = Type.Array(Entry, {
  minItems: 0,
  maxItems: MAX_IP_LIST_ENTRIES,
  description: `Addresses and CIDR ranges, at most ${MAX_IP_LIST_ENTRIES}; a visitor matches when its address is one of them or inside one of the ranges`,
});
const Note = Type.String({ maxLength: 2000 });

export const IpListCreateSchema = Type.Object({ name: Name, entries: Entries, note: Type.Optional(Note) }, { ...closed, $id: 'IpListCreate' });
export type IpListCreate = Static<typeof IpListCreateSchema>;

export const IpListUpdateSchema = Type.Object(
  {
    name: Type.Optional(Name),
    entries: Type.Optional({ ...Entries, description: 'Replaces every entry of the list' }),
    note: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: 2000, description: 'null clears it' })),
  },
  { ...closed, minProperties: 1, $id: 'IpListUpdate' },
);
export type IpListUpdate = Static<typeof IpListUpdateSchema>;

export const IpListSchema = Type.Object(
  {
    id: Type.String({ description: 'Prefix `ipl_`; what rules name in `match.ip_list_ids`' }),
    name: Type.String(),
    entries: Type.Array(Type.String()),
    note: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { ...closed, $id: 'IpList' },
);
export type IpList = Static<typeof IpListSchema>;

export const IpListListSchema = Type.Object(
  {
    data: Type.Array(IpListSchema),
    pagination: Type.Object({ next_cursor: Type.Null(), has_more: Type.Literal(false) }, { ...closed, description: 'Always a single page' }),
  },
  { ...closed, $id: 'IpListList' },
);
export type IpListList = Static<typeof IpListListSchema>;
