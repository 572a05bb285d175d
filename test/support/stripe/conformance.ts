import path from 'node:path';
import ts from 'typescript';
import type { Fields, Schema } from './params';

/**
 * Checks the Stripe-shaped server against stripe-node's own declarations
 * (node_modules/stripe/types/*.d.ts, generated from Stripe's OpenAPI spec for 2025-08-27.basil):
 * - `checkObject('Subscription', value)`: every required field is present, no field is undeclared,
 *   and every value has the declared type (string enums included), recursively;
 * - `checkParams('SubscriptionCreateParams', fields)`: every parameter the server accepts, nested
 *   ones and enum values included, is one stripe-node declares for that call.
 */
export interface StripeTypes {
  checkObject(typeName: string, value: unknown): string[];
  checkParams(typeName: string, fields: Fields): string[];
  has(typeName: string): boolean;
}

export function loadStripeTypes(typeNames: string[]): StripeTypes {
  const dir = path.resolve('test/support/stripe');
  const file = path.join(dir, '__stripe_types_probe__.ts');
  const source = `import Stripe from 'stripe';\n${typeNames.map((n, i) => `export type T${i} = Stripe.${n};`).join('\n')}\n`;
  const options: ts.CompilerOptions = {
    strict: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    types: [],
    noEmit: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (f, lang, ...rest) => (path.resolve(f) === file ? ts.createSourceFile(f, source, lang) : getSourceFile(f, lang, ...rest));
  host.fileExists = (f) => path.resolve(f) === file || fileExists(f);
  const program = ts.createProgram([file], options, host);
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const exports = checker.getExportsOfModule(moduleSymbol);
  const types = new Map<string, ts.Type>();
  typeNames.forEach((name, i) => {
    const symbol = exports.find((s) => s.name === `T${i}`);
    if (!symbol) return;
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    if (!(type.flags & ts.TypeFlags.Any)) types.set(name, type);
  });

  const isOptional = (s: ts.Symbol) => (s.flags & ts.SymbolFlags.Optional) !== 0;
  const members = (t: ts.Type) => (t.isUnion() ? t.types : [t]);
  const nonNullish = (t: ts.Type) => members(t).filter((m) => !(m.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
  const allows = (t: ts.Type, flag: ts.TypeFlags) => members(t).some((m) => (m.flags & flag) !== 0);
  const isObjectType = (t: ts.Type) => (t.flags & ts.TypeFlags.Object) !== 0 && !checker.isArrayType(t);

  /**
   * `data.previous_attributes` holds only the changed fields, nested objects reduced to their
   * changed keys (Stripe sends e.g. `{"cancellation_details": {"reason": null}}`): below it,
   * missing fields are fine; undeclared fields and wrong types are not.
   */
  function check(type: ts.Type, value: unknown, at: string, errors: string[], depth: number, partial = false) {
    if (depth > 12) return;
    if (value === null) {
      if (!allows(type, ts.TypeFlags.Null)) errors.push(`${at}: null, but declared ${checker.typeToString(type)}`);
      return;
    }
    const options = nonNullish(type);
    if (options.some((m) => m.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown))) return;
    if (typeof value === 'string') {
      if (options.some((m) => m.flags & ts.TypeFlags.String)) return;
      const literals = options.filter((m) => m.isStringLiteral()).map((m) => (m as ts.StringLiteralType).value);
      if (!literals.includes(value)) errors.push(`${at}: '${value}' is not one of ${literals.length ? literals.join('|') : checker.typeToString(type)}`);
      return;
    }
    if (typeof value === 'number') {
      if (!options.some((m) => m.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)))
        errors.push(`${at}: number, but declared ${checker.typeToString(type)}`);
      return;
    }
    if (typeof value === 'boolean') {
      if (!options.some((m) => m.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)))
        errors.push(`${at}: boolean, but declared ${checker.typeToString(type)}`);
      return;
    }
    if (Array.isArray(value)) {
      const array = options.find((m) => checker.isArrayType(m));
      if (!array) {
        errors.push(`${at}: array, but declared ${checker.typeToString(type)}`);
        return;
      }
      const element = checker.getTypeArguments(array as ts.TypeReference)[0]!;
      value.forEach((v, i) => {
        check(element, v, `${at}[${i}]`, errors, depth + 1, partial);
      });
      return;
    }
    if (typeof value === 'object') {
      const objects = options.filter(isObjectType);
      if (!objects.length) {
        errors.push(`${at}: object, but declared ${checker.typeToString(type)}`);
        return;
      }
      let best: string[] | null = null;
      for (const candidate of objects) {
        const e: string[] = [];
        checkObjectType(candidate, value as Record<string, unknown>, at, e, depth, partial);
        if (!best || e.length < best.length) best = e;
        if (!e.length) break;
      }
      errors.push(...best!);
      return;
    }
    errors.push(`${at}: unexpected ${typeof value}`);
  }

  function checkObjectType(type: ts.Type, value: Record<string, unknown>, at: string, errors: string[], depth: number, partial: boolean) {
    const props = checker.getPropertiesOfType(type);
    const index = checker.getIndexTypeOfType(type, ts.IndexKind.String);
    const declared = new Set(props.map((p) => p.name));
    for (const p of props) {
      const has = Object.hasOwn(value, p.name);
      const propType = checker.getTypeOfSymbol(p);
      if (!has) {
        if (!partial && !isOptional(p) && !allows(propType, ts.TypeFlags.Undefined | ts.TypeFlags.Void)) errors.push(`${at}.${p.name}: missing`);
        continue;
      }
      check(propType, value[p.name], `${at}.${p.name}`, errors, depth + 1, partial || p.name === 'previous_attributes');
    }
    for (const key of Object.keys(value)) {
      if (declared.has(key)) continue;
      if (index) check(index, value[key], `${at}[${key}]`, errors, depth + 1, partial);
      else errors.push(`${at}.${key}: not declared by stripe-node`);
    }
  }

  function checkFields(type: ts.Type, fields: Fields, at: string, errors: string[]) {
    const objects = nonNullish(type).filter(isObjectType);
    for (const [name, schema] of Object.entries(fields)) {
      const where = at ? `${at}[${name}]` : name;
      const prop = objects.map((o) => checker.getPropertyOfType(o, name)).find(Boolean);
      if (!prop) {
        errors.push(`${where}: not a parameter stripe-node declares`);
        continue;
      }
      checkSchema(checker.getTypeOfSymbol(prop), schema, where, errors);
    }
  }

  function checkSchema(type: ts.Type, schema: Schema, at: string, errors: string[]) {
    const options = nonNullish(type);
    switch (schema.t) {
      case 'object': {
        const objects = options.filter(isObjectType);
        if (!objects.length) errors.push(`${at}: an object here, but stripe-node declares ${checker.typeToString(type)}`);
        else checkFields(type, schema.fields, at, errors);
        return;
      }
      case 'array': {
        const array = options.find((m) => checker.isArrayType(m));
        if (!array) errors.push(`${at}: an array here, but stripe-node declares ${checker.typeToString(type)}`);
        else checkSchema(checker.getTypeArguments(array as ts.TypeReference)[0]!, schema.of, `${at}[]`, errors);
        return;
      }
      case 'string': {
        if (schema.enum) {
          if (options.some((m) => m.flags & ts.TypeFlags.String)) return;
          const literals = options.filter((m) => m.isStringLiteral()).map((m) => (m as ts.StringLiteralType).value);
          for (const v of schema.enum) if (!literals.includes(v)) errors.push(`${at}: value '${v}' is not one stripe-node declares (${literals.join('|')})`);
        } else if (!options.some((m) => m.flags & (ts.TypeFlags.String | ts.TypeFlags.StringLiteral))) {
          errors.push(`${at}: a string here, but stripe-node declares ${checker.typeToString(type)}`);
        }
        return;
      }
      case 'number':
        // Decimals travel as strings (`unit_amount_decimal: string`); the server parses them.
        if (!options.some((m) => m.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral | ts.TypeFlags.String)))
          errors.push(`${at}: a decimal here, but stripe-node declares ${checker.typeToString(type)}`);
        return;
      case 'int':
        if (!options.some((m) => m.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)))
          errors.push(`${at}: a number here, but stripe-node declares ${checker.typeToString(type)}`);
        return;
      case 'bool':
        if (!options.some((m) => m.flags & (ts.TypeFlags.Boolean | ts.TypeFlags.BooleanLiteral)))
          errors.push(`${at}: a boolean here, but stripe-node declares ${checker.typeToString(type)}`);
        return;
      case 'ts':
        if (!options.some((m) => m.flags & (ts.TypeFlags.Number | ts.TypeFlags.NumberLiteral)))
          errors.push(`${at}: a timestamp here, but stripe-node declares ${checker.typeToString(type)}`);
        return;
      case 'metadata':
        if (!options.some((m) => isObjectType(m) && checker.getIndexTypeOfType(m, ts.IndexKind.String)))
          errors.push(`${at}: metadata here, but stripe-node declares ${checker.typeToString(type)}`);
        return;
    }
  }

  return {
    has: (name) => types.has(name),
    checkObject(typeName, value) {
      const type = types.get(typeName);
      if (!type) return [`unknown stripe-node type ${typeName}`];
      const errors: string[] = [];
      check(type, value, typeName, errors, 0);
      return errors;
    },
    checkParams(typeName, fields) {
      const type = types.get(typeName);
      if (!type) return [`unknown stripe-node params type ${typeName}`];
      const errors: string[] = [];
      checkFields(type, fields, '', errors);
      return errors;
    },
  };
}
