import { z } from 'zod';

/** One field of world.yaml as the reference shows it. */
export interface SchemaField {
  /** Dotted path; `[]` marks the elements of a list (`tasks[].id`). */
  readonly path: string;
  readonly type: string;
  /** The default as YAML-ish text, or '' when the field is required or has none. */
  readonly default: string;
  readonly required: boolean;
  /** '' when the schema has no `.describe()` for the field. */
  readonly description: string;
}

/** The part of JSON Schema that zod's export of world.yaml's schema uses. */
interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema | boolean;
  required?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

/** The members of a union, with `null` left out: a nullable field reads as its other type. */
function membersOf(schema: JsonSchema): JsonSchema[] | null {
  const members = schema.anyOf ?? schema.oneOf;
  if (!members) return null;
  return members.filter((m) => m.type !== 'null');
}

/** Bounds zod adds to every integer (the safe range) say nothing a world.yaml author needs. */
function boundOf(value: number | undefined): number | undefined {
  return value === undefined || Math.abs(value) === Number.MAX_SAFE_INTEGER ? undefined : value;
}

function describeNumber(schema: JsonSchema): string {
  const integer = schema.type === 'integer';
  const min = boundOf(schema.minimum);
  const exclusiveMin = boundOf(schema.exclusiveMinimum);
  const max = boundOf(schema.maximum);
  const exclusiveMax = boundOf(schema.exclusiveMaximum);
  // An integer above 0 reads better as "≥ 1".
  const low =
    exclusiveMin !== undefined
      ? integer
        ? { value: exclusiveMin + 1, inclusive: true }
        : { value: exclusiveMin, inclusive: false }
      : min !== undefined
        ? { value: min, inclusive: true }
        : undefined;
  const high = max !== undefined ? { value: max, inclusive: true } : exclusiveMax !== undefined ? { value: exclusiveMax, inclusive: false } : undefined;
  const base = integer ? 'integer' : 'number';
  if (low?.inclusive && high?.inclusive) return `${base} ${low.value}–${high.value}`;
  const parts = [base];
  if (low) parts.push(`${low.inclusive ? '≥' : '>'} ${low.value}`);
  if (high) parts.push(`${high.inclusive ? '≤' : '<'} ${high.value}`);
  return parts.join(' ');
}

/** The type of a schema in words a world.yaml author reads: `string`, `integer ≥ 1`, `list of string`, `"a" | "b"`. */
function typeOf(schema: JsonSchema): string {
  const members = membersOf(schema);
  if (members) return members.length === 1 ? typeOf(members[0]!) : members.map((m) => typeOf(m)).join(' or ');
  if (schema.enum) {
    const quote = schema.enum.every((v) => typeof v === 'string');
    return schema.enum.map((v) => (quote ? `"${String(v)}"` : JSON.stringify(v))).join(' \\| ');
  }
  if ('const' in schema) return JSON.stringify(schema.const);
  switch (schema.type) {
    case 'integer':
    case 'number':
      return describeNumber(schema);
    case 'array':
      return `list of ${schema.items ? typeOf(schema.items) : 'anything'}`;
    case 'object':
      return schema.properties ? 'object' : 'record';
    case 'string':
      return schema.format === 'uri' ? 'URL' : 'string';
    case undefined:
      return 'any';
    default:
      return Array.isArray(schema.type) ? schema.type.join(' or ') : schema.type;
  }
}

function formatDefault(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value === '' ? '""' : JSON.stringify(value);
  return JSON.stringify(value);
}

/** The object schemas a field holds, to walk into: itself, a list's elements, a union's object members. */
function objectsWithin(schema: JsonSchema, path: string): Array<{ object: JsonSchema; path: string }> {
  const members = membersOf(schema);
  if (members) return members.flatMap((m) => objectsWithin(m, path));
  if (schema.properties) return [{ object: schema, path }];
  if (schema.type === 'array' && schema.items) return objectsWithin(schema.items, `${path}[]`);
  return [];
}

/**
 * Every field of an object schema, depth first, in the order the schema declares them: read from
 * zod's own JSON Schema export of what a person writes (`io: 'input'`, so a field with a default is
 * not required).
 */
export function listSchemaFields(schema: z.core.$ZodType): SchemaField[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  // A union of an object and a list of it (publish) would list its fields twice: once is enough.
  const seen = new Set<string>();
  return walkFields(json, '').filter((field) => {
    const key = field.path.replaceAll('[]', '');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function walkFields(schema: JsonSchema, prefix: string): SchemaField[] {
  const fields: SchemaField[] = [];
  for (const { object, path } of objectsWithin(schema, prefix)) {
    const required = new Set(object.required ?? []);
    for (const [key, value] of Object.entries(object.properties ?? {})) {
      const fieldPath = path ? `${path}.${key}` : key;
      const hasDefault = 'default' in value;
      fields.push({
        path: fieldPath,
        type: typeOf(value),
        default: hasDefault ? formatDefault(value.default) : '',
        required: required.has(key) && !hasDefault,
        description: value.description ?? '',
      });
      fields.push(...walkFields(value, fieldPath));
    }
  }
  return fields;
}
