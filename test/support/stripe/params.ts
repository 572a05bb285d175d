import { paramError, unknownParameter, missingParameter } from './errors';

/**
 * Request parameters as Stripe's v1 API reads them: `application/x-www-form-urlencoded` bodies (and
 * query strings for GET and DELETE) with bracketed keys, the encoding stripe-node produces with
 * `qs.stringify(data, { arrayFormat: 'indices' })` (node_modules/stripe/esm/utils.js):
 * `items[0][price]=price_1`, `metadata[plan]=pro`, `expand[0]=latest_invoice` (also `expand[]=`).
 * An empty value (`pause_collection=`) means "unset".
 */
export type Raw = string | RawTree;
export interface RawTree {
  [key: string]: Raw;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

function splitKey(key: string): string[] {
  const first = key.indexOf('[');
  if (first < 0) return [key];
  const segments = [key.slice(0, first)];
  const re = /\[([^\]]*)\]/g;
  let m: RegExpExecArray | null;
  re.lastIndex = first;
  while ((m = re.exec(key))) segments.push(m[1]!);
  return segments;
}

export function parseForm(body: string): RawTree {
  const root: RawTree = {};
  if (!body) return root;
  for (const pair of body.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1));
    const segments = splitKey(key);
    let node: RawTree = root;
    for (let i = 0; i < segments.length; i++) {
      let seg = segments[i]!;
      if (seg === '' && i > 0) seg = String(Object.keys(node).length);
      const last = i === segments.length - 1;
      if (last) {
        node[seg] = value;
      } else {
        const next = node[seg];
        if (typeof next === 'string' || next === undefined) {
          // `a=x&a[b]=y`: the later, structured form wins (Stripe rejects such mixes; this is rare).
          node[seg] = {};
        }
        node = node[seg] as RawTree;
      }
    }
  }
  return root;
}

// ---- schemas ---------------------------------------------------------------------------------

interface Base {
  required?: boolean;
  /** `param=` (empty string) is accepted and yields null ("unset"). */
  emptyable?: boolean;
}
export type Schema =
  | (Base & { t: 'string'; max?: number; enum?: readonly string[] })
  | (Base & { t: 'int'; min?: number; max?: number })
  | (Base & { t: 'number'; min?: number; max?: number })
  | (Base & { t: 'bool' })
  | (Base & { t: 'ts'; now?: boolean })
  | (Base & { t: 'metadata' })
  | (Base & { t: 'object'; fields: Fields })
  | (Base & { t: 'array'; of: Schema; maxItems?: number });
export type Fields = Record<string, Schema>;

export const s = {
  str: (o: { max?: number; required?: boolean; emptyable?: boolean } = {}): Schema => ({ t: 'string', ...o }),
  enum: (values: readonly string[], o: Base = {}): Schema => ({ t: 'string', enum: values, ...o }),
  int: (o: { min?: number; max?: number } & Base = {}): Schema => ({ t: 'int', ...o }),
  num: (o: { min?: number; max?: number } & Base = {}): Schema => ({ t: 'number', ...o }),
  bool: (o: Base = {}): Schema => ({ t: 'bool', ...o }),
  ts: (o: { now?: boolean } & Base = {}): Schema => ({ t: 'ts', ...o }),
  meta: (o: Base = {}): Schema => ({ t: 'metadata', emptyable: true, ...o }),
  obj: (fields: Fields, o: Base = {}): Schema => ({ t: 'object', fields, ...o }),
  arr: (of: Schema, o: Base & { maxItems?: number } = {}): Schema => ({ t: 'array', of, ...o }),
  req: <T extends Schema>(schema: T): T => ({ ...schema, required: true }),
};

export const listFields: Fields = {
  limit: s.int({ min: 1, max: 100 }),
  starting_after: s.str(),
  ending_before: s.str(),
};

export const createdFilter: Schema = s.obj({ gt: s.int(), gte: s.int(), lt: s.int(), lte: s.int() });

export type UnknownParamHook = (path: string) => string | null;

const emptyStringError = (path: string) =>
  paramError(
    `You passed an empty string for '${path}'. We assume empty values are an attempt to unset a parameter; however '${path}' cannot be unset. You ` +
      `should remove '${path}' from your request or supply a non-empty value.`,
    path,
    'parameter_invalid_empty',
  );

const orList = (values: readonly string[]) => (values.length <= 2 ? values.join(' or ') : `${values.slice(0, -1).join(', ')}, or ${values[values.length - 1]}`);

function describe(raw: Raw): string {
  return typeof raw === 'string' ? raw : JSON.stringify(raw);
}

function convert(schema: Schema, raw: Raw, path: string, unknownHint: UnknownParamHook): unknown {
  if (raw === '' && schema.t !== 'string') {
    if (schema.emptyable) return schema.t === 'array' ? [] : schema.t === 'metadata' ? null : null;
    throw emptyStringError(path);
  }
  switch (schema.t) {
    case 'string': {
      if (typeof raw !== 'string') throw paramError(`Invalid string: ${describe(raw)}`, path, 'parameter_invalid_string');
      if (raw === '') {
        if (schema.emptyable) return null;
        throw emptyStringError(path);
      }
      if (schema.enum && !schema.enum.includes(raw)) {
        throw paramError(`Invalid ${path}: must be one of ${orList(schema.enum)}`, path);
      }
      if (schema.max !== undefined && raw.length > schema.max) {
        throw paramError(`Invalid string: ${raw.slice(0, 20)}...; must be at most ${schema.max} characters`, path, 'parameter_invalid_string');
      }
      return raw;
    }
    case 'int':
    case 'number': {
      const ok = typeof raw === 'string' && (schema.t === 'int' ? /^-?\d+$/.test(raw) : /^-?\d+(\.\d+)?$/.test(raw));
      if (!ok) {
        throw paramError(
          `Invalid ${schema.t === 'int' ? 'integer' : 'decimal'}: ${describe(raw)}`,
          path,
          schema.t === 'int' ? 'parameter_invalid_integer' : undefined,
        );
      }
      const n = Number(raw);
      if (schema.min !== undefined && n < schema.min) throw paramError(`This value must be greater than or equal to ${schema.min}.`, path);
      if (schema.max !== undefined && n > schema.max) throw paramError(`This value must be less than or equal to ${schema.max}.`, path);
      return n;
    }
    case 'bool': {
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw paramError(`Invalid boolean: ${describe(raw)}`, path);
    }
    case 'ts': {
      if (schema.now && raw === 'now') return 'now';
      if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw paramError(`Invalid timestamp: must be an integer Unix timestamp.`, path);
      return Number(raw);
    }
    case 'metadata': {
      if (typeof raw === 'string') throw paramError(`Invalid hash`, path);
      const out: Record<string, string | null> = {};
      const entries = Object.entries(raw);
      if (entries.length > 50) throw paramError('Metadata can have a maximum of 50 keys.', path);
      for (const [k, v] of entries) {
        if (typeof v !== 'string') throw paramError(`Invalid string: ${describe(v)}`, `${path}[${k}]`);
        if (k.length > 40) throw paramError(`Metadata keys can have a maximum length of 40 characters.`, `${path}[${k}]`);
        if (v.length > 500) throw paramError(`Metadata values can have a maximum length of 500 characters.`, `${path}[${k}]`);
        out[k] = v === '' ? null : v;
      }
      return out;
    }
    case 'object': {
      if (typeof raw === 'string') throw paramError(`Invalid hash`, path);
      return convertFields(schema.fields, raw, path, unknownHint);
    }
    case 'array': {
      if (typeof raw === 'string') throw paramError(`Invalid array`, path);
      const keys = Object.keys(raw);
      if (!keys.every((k) => /^\d+$/.test(k))) throw paramError(`Invalid array`, path);
      keys.sort((a, b) => Number(a) - Number(b));
      if (schema.maxItems !== undefined && keys.length > schema.maxItems) {
        throw paramError(`Invalid array: must have at most ${schema.maxItems} items`, path);
      }
      return keys.map((k) => convert(schema.of, raw[k]!, `${path}[${k}]`, unknownHint));
    }
  }
}

function convertFields(fields: Fields, raw: RawTree, prefix: string, unknownHint: UnknownParamHook): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const at = (k: string) => (prefix ? `${prefix}[${k}]` : k);
  for (const [key, value] of Object.entries(raw)) {
    const schema = fields[key];
    if (!schema) {
      const hint = unknownHint(at(key));
      if (hint) throw paramError(`Received unknown parameter: ${at(key)} ${hint}`, at(key), 'parameter_unknown');
      throw unknownParameter(at(key));
    }
    out[key] = convert(schema, value, at(key), unknownHint);
  }
  for (const [key, schema] of Object.entries(fields)) {
    if (schema.required && (out[key] === undefined || out[key] === null)) throw missingParameter(at(key));
  }
  return out;
}

/**
 * Converts raw parameters against an endpoint's fields (plus `expand`, which every endpoint takes),
 * answering as Stripe does: "Received unknown parameter: items[0][foo]", "Missing required param:
 * customer.", "Invalid integer: abc", "Invalid payment_behavior: must be one of ...".
 */
export function validateParams(fields: Fields, raw: RawTree, unknownHint: UnknownParamHook = () => null, expandable = true): Record<string, any> {
  return convertFields(expandable ? { ...fields, expand: s.arr(s.str()) } : fields, raw, '', unknownHint);
}
