/**
 * From rows to domain objects. Stores read with `db.query`, which returns the row as PostgreSQL
 * names it (snake_case, timestamps as `Date`, bigint and count as strings). A `rowMapper` lists
 * every field of the domain object and how to read it; nothing else passes (a password hash that a
 * query selected does not end up in a user), and its `columns` is the matching select list.
 */

/** Reads one column's value into a field. */
export type Read<V> = (value: unknown) => V;

/** A field read from the column of the same name in snake_case, or from a named column. */
export type Field<V> = Read<V> | readonly [column: string, read: Read<V>];

export type RowSpec<T> = { [K in keyof T]-?: Field<T[K]> };

export interface RowMapper<T> {
  (row: object): T;
  /** The select list, in the order of the spec: `id, project_id, created_at`. */
  readonly columns: string;
  /** The first row mapped, or null when there is none. */
  first(rows: readonly object[]): T | null;
}

const toDate = (v: unknown): Date => (v instanceof Date ? v : new Date(v as string | number));

export const read = {
  text: ((v) => v as string) satisfies Read<string>,
  textOrNull: ((v) => (v ?? null) as string | null) satisfies Read<string | null>,
  bool: ((v) => v === true) satisfies Read<boolean>,
  /** Integers, including bigint and count(*), which arrive as strings. */
  number: ((v) => Number(v)) satisfies Read<number>,
  numberOrNull: ((v) => (v === null || v === undefined ? null : Number(v))) satisfies Read<number | null>,
  date: toDate satisfies Read<Date>,
  dateOrNull: ((v) => (v === null || v === undefined ? null : toDate(v))) satisfies Read<Date | null>,
  /** A value the database constrains and the domain names by a narrower type (a provider, a purpose). */
  as:
    <V>(): Read<V> =>
    (v) =>
      (v ?? null) as V,
};

const snakeCase = (field: string) => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function rowMapper<T>(spec: RowSpec<T>): RowMapper<T> {
  const fields = Object.entries(spec as Record<string, Field<unknown>>).map(([field, f]) =>
    typeof f === 'function' ? { field, column: snakeCase(field), read: f } : { field, column: f[0], read: f[1] },
  );
  const map = (row: object): T => {
    const source = row as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const { field, column, read } of fields) out[field] = read(source[column]);
    return out as T;
  };
  return Object.assign(map, {
    columns: fields.map((f) => f.column).join(', '),
    first: (rows: readonly object[]) => (rows.length > 0 ? map(rows[0]!) : null),
  });
}

export { isUuid } from '../../domain/ids';
