import type { z } from 'zod';

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

type AnySchema = z.core.$ZodType & { description?: string };
type Def = { type: string } & Record<string, unknown>;

function defOf(schema: AnySchema): Def {
  return schema._zod.def as unknown as Def;
}

const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'pipe']);

interface Unwrapped {
  readonly core: AnySchema;
  readonly description: string;
  readonly defaultValue: unknown;
  readonly hasDefault: boolean;
  readonly optional: boolean;
}

/** Peels optional/default/pipe wrappers off a schema, keeping the outermost description and the default. */
function unwrap(schema: AnySchema): Unwrapped {
  let current = schema;
  let description = '';
  let hasDefault = false;
  let defaultValue: unknown;
  let optional = false;
  for (;;) {
    description ||= current.description ?? '';
    const def = defOf(current);
    if (!WRAPPERS.has(def.type)) break;
    if (def.type === 'default' || def.type === 'prefault') {
      hasDefault = true;
      defaultValue = def.defaultValue;
    }
    if (def.type === 'optional') optional = true;
    current = (def.type === 'pipe' ? def.in : def.innerType) as AnySchema;
  }
  return { core: current, description, defaultValue, hasDefault, optional };
}

type NumberCheck = { check?: string; value?: number; inclusive?: boolean; format?: string };

function describeNumber(schema: AnySchema): string {
  const checks = ((defOf(schema).checks as Array<{ _zod: { def: NumberCheck } }> | undefined) ?? []).map((c) => c._zod.def);
  const integer = checks.some((c) => c.format === 'safeint');
  const low = checks.find((c) => c.check === 'greater_than');
  const high = checks.find((c) => c.check === 'less_than');
  // An integer above 0 reads better as "≥ 1".
  const lowest = low && integer && !low.inclusive ? { ...low, value: (low.value ?? 0) + 1, inclusive: true } : low;
  const base = integer ? 'integer' : 'number';
  if (lowest && high?.inclusive && lowest.inclusive) return `${base} ${lowest.value}–${high.value}`;
  const parts = [base];
  if (lowest) parts.push(`${lowest.inclusive ? '≥' : '>'} ${lowest.value}`);
  if (high) parts.push(`${high.inclusive ? '≤' : '<'} ${high.value}`);
  return parts.join(' ');
}

/** The type of a schema in words a world.yaml author reads: `string`, `integer ≥ 1`, `list of string`, `"a" | "b"`. */
function typeOf(schema: AnySchema): string {
  const { core } = unwrap(schema);
  const def = defOf(core);
  switch (def.type) {
    case 'number':
      return describeNumber(core);
    case 'enum':
      return Object.values(def.entries as Record<string, string>)
        .map((v) => `"${v}"`)
        .join(' \\| ');
    case 'array':
      return `list of ${typeOf(def.element as AnySchema)}`;
    case 'union':
      return (def.options as AnySchema[]).map((o) => typeOf(o)).join(' or ');
    case 'object':
      return 'object';
    case 'literal':
      return (def.values as unknown[]).map((v) => JSON.stringify(v)).join(' \\| ');
    case 'string':
      return (core as unknown as { format?: string | null }).format === 'url' ? 'URL' : 'string';
    default:
      return def.type;
  }
}

function formatDefault(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value === '' ? '""' : JSON.stringify(value);
  return JSON.stringify(value);
}

/** The object schemas a field holds, to walk into: itself, a list's elements, a union's object members. */
function objectsWithin(schema: AnySchema, path: string): Array<{ object: AnySchema; path: string }> {
  const { core } = unwrap(schema);
  const def = defOf(core);
  if (def.type === 'object') return [{ object: core, path }];
  if (def.type === 'array') return objectsWithin(def.element as AnySchema, `${path}[]`);
  if (def.type === 'union') return (def.options as AnySchema[]).flatMap((o) => objectsWithin(o, path));
  return [];
}

/** Every field of an object schema, depth first, in the order the schema declares them. */
export function listSchemaFields(schema: z.core.$ZodType): SchemaField[] {
  // A union of an object and a list of it (publish) would list its fields twice: once is enough.
  const seen = new Set<string>();
  return walkFields(schema, '').filter((field) => {
    const key = field.path.replaceAll('[]', '');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function walkFields(schema: z.core.$ZodType, prefix: string): SchemaField[] {
  const fields: SchemaField[] = [];
  for (const { object, path } of objectsWithin(schema as AnySchema, prefix)) {
    const shape = defOf(object).shape as Record<string, AnySchema>;
    for (const [key, value] of Object.entries(shape)) {
      const fieldPath = path ? `${path}.${key}` : key;
      const u = unwrap(value);
      fields.push({
        path: fieldPath,
        type: typeOf(value),
        default: u.hasDefault ? formatDefault(u.defaultValue) : '',
        required: !u.hasDefault && !u.optional,
        description: u.description,
      });
      fields.push(...walkFields(value, fieldPath));
    }
  }
  return fields;
}
