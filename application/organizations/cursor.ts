import { base64UrlDecode, base64UrlEncode } from '../../domain/encoding';

/** A keyset position (created_at, id) as an opaque page cursor. */
export interface PagePosition {
  createdAt: Date;
  id: string;
}

export const encodeCursor = (p: PagePosition): string => base64UrlEncode(new TextEncoder().encode(`${p.createdAt.toISOString()}|${p.id}`));

/** The position a cursor names; undefined for a cursor Tollgate did not make (the first page then). */
export function decodeCursor(text: string): PagePosition | undefined {
  const bytes = base64UrlDecode(text);
  if (!bytes) return undefined;
  const [at, id] = new TextDecoder().decode(bytes).split('|');
  const createdAt = new Date(at ?? '');
  return Number.isNaN(createdAt.getTime()) || !id ? undefined : { createdAt, id };
}
