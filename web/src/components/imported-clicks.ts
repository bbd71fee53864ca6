// How the dashboard words click totals a link came with from another service: always as imported, with their source
// and date, never as clicks counted here (the API keeps them apart: a link's `imported`, the summary's
// `imported_clicks`).
import { sourceInfo } from '../screens/imports/import-types.ts';
import type { SourceKind } from '../screens/imports/import-types.ts';

const integer = new Intl.NumberFormat('en');

/** The source's name as the Import screen shows it (`Bitly`, `Shlink (CSV export)`…), else its kind. */
export function sourceLabel(source: string): string {
  return (sourceInfo(source as SourceKind) as ReturnType<typeof sourceInfo> | undefined)?.label ?? source;
}

function day(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** `1,234 clicks imported from Bitly on 1 Dec 2026`, or `Imported from Bitly on …` when the source gave no total. */
export function importedClicksText(source: string, clicks: number | null, at: string): string {
  if (clicks === null) return `Imported from ${sourceLabel(source)} on ${day(at)}`;
  return `${integer.format(clicks)} ${clicks === 1 ? 'click' : 'clicks'} imported from ${sourceLabel(source)} on ${day(at)}`;
}
