// CSV cells for the streamed exports (analytics' clicks, the links of a workspace): RFC 4180 records built a cell at
// a time with papaparse's `unparse`, cells a spreadsheet would run as a formula neutralised with a leading `'`.
import Papa from 'papaparse';

/** RFC 4180 (CRLF line ends); a cell starting with `=`, `+`, `-`, `@`, a tab or a CR gets a leading `'` (whatever follows, newlines included). */
export const UNPARSE: Papa.UnparseConfig = { newline: '\r\n', escapeFormulae: /^[=+\-@\t\r]/ };

/**
 * Text that is its own CSV cell: no quote, comma, CR, LF, space or byte order mark anywhere (nothing to quote), and a
 * first character that no spreadsheet reads as a formula. Ids, times, codes, addresses and most URLs are.
 */
const PLAIN = /^[0-9A-Za-z_./:][0-9A-Za-z_./:?&=%#~+\-@!$*;]*$/;
/** Characters of cell text an export keeps for values that repeat (a city, a referer): about 2 MB at most. */
const KNOWN_CHARS = 1_000_000;

/** What a cell of the export holds. */
export type CsvValue = string | number | boolean | null | undefined;

/**
 * The CSV text of an export's cells: what `unparse` makes of each, asked of it once per distinct value (cities,
 * referers and URLs repeat from row to row, and `unparse` weighs more per cell than reading the click) and not at all
 * for PLAIN text, which it would leave as it is. One per export, so what it keeps goes with the export.
 */
export class CsvCells {
  private readonly known = new Map<CsvValue, string>();
  private room = KNOWN_CHARS;
  private readonly config: Papa.UnparseConfig;

  /** `config`: how `unparse` writes a cell (UNPARSE unless an export guards formulas otherwise). */
  constructor(config: Papa.UnparseConfig = UNPARSE) {
    this.config = config;
  }

  /** One record, CRLF included. */
  record(values: readonly CsvValue[]): string {
    let line = '';
    for (let i = 0; i < values.length; i++) line += i === 0 ? this.cell(values[i]) : `,${this.cell(values[i])}`;
    return `${line}\r\n`;
  }

  private cell(value: CsvValue): string {
    if (value === null || value === undefined) return '';
    const text = typeof value === 'string' ? value : String(value);
    if (PLAIN.test(text)) return text;
    let cell = this.known.get(value);
    if (cell !== undefined) return cell;
    // A number or a boolean keeps its own type: `unparse` guards text only, and -1 is a number, not a formula.
    cell = Papa.unparse([[value]], this.config);
    if (cell.length <= this.room) {
      this.known.set(value, cell);
      this.room -= cell.length;
    }
    return cell;
  }
}
