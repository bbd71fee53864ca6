import type { ComponentChildren } from 'preact';

export interface Column<T> {
  /** Column heading. */
  label: string;
  /** What the heading cell shows instead of the label (a "select all" box); the label stays its key. */
  header?: ComponentChildren;
  render: (row: T) => ComponentChildren;
  /** Right-aligned numbers. */
  numeric?: boolean;
}

interface DataTableProps<T> {
  /** Read out as the table's name; also names the scrolling region. */
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  /** Hide the caption visually (the page heading already says it). */
  hideCaption?: boolean;
}

/**
 * A table in a focusable scrolling region: on a phone the table scrolls sideways inside it instead of widening
 * the page, and keyboard users can scroll it too (the region is in the tab order).
 */
export function DataTable<T>({ caption, columns, rows, rowKey, hideCaption }: DataTableProps<T>) {
  return (
    <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table class="striped">
        <caption class={hideCaption ? 'visually-hidden' : undefined}>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.label} scope="col" class={column.numeric ? 'numeric' : undefined}>
                {column.header ?? column.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((column) => (
                <td key={column.label} class={column.numeric ? 'numeric' : undefined}>
                  {column.render(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
