/** Plain-text layouts shared by the commands' human output. */

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}

/** `  key : value` lines, keys padded to `width`; an empty key continues the previous value. */
export function fields(rows: ReadonlyArray<readonly [string, string]>, width = 16): string {
  return rows.map(([k, v]) => `  ${k.padEnd(width)}${k ? ':' : ' '} ${v}`).join('\n');
}
