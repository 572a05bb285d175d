const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Tollgate's record ids are UUIDs; anything else (from a path, a header, processor metadata) matches no record. */
export const isUuid = (value: string): boolean => UUID.test(value);
