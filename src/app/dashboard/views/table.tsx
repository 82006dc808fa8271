// The dashboard's one table: a caption, a header row naming the columns, and the body rows the view
// gives, so every list reads the same to a screen reader.
import type { ComponentChildren } from 'preact';

export function Table(props: {
  /** Read by screen readers; shown only with `captionShown`, where no heading above names the table. */
  caption: ComponentChildren;
  captionShown?: boolean;
  /** `stacked` (on a narrow window each row a block, each cell under its column's name) or `side-by-side` (two versions compared). */
  class?: string;
  columns: readonly ComponentChildren[];
  /** The last column's name, for screen readers alone: a column of links or buttons needs no visible heading. */
  actions?: string;
  /** The rows: one `<tr>` each. */
  children: ComponentChildren;
}) {
  return (
    <table class={props.class}>
      <caption class={props.captionShown ? undefined : 'visually-hidden'}>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((column, i) => (
            <th key={i} scope="col">
              {column}
            </th>
          ))}
          {props.actions !== undefined && (
            <th scope="col">
              <span class="visually-hidden">{props.actions}</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}
