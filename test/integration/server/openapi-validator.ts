/**
 * Validates a value against a schema of the OpenAPI document, for the part of JSON Schema the
 * document uses: type (one or several, "integer" included), properties, required, items, enum,
 * anyOf and $ref into components.schemas. Returns every problem with its path; empty: valid.
 */
type Schema = Record<string, any>;

export function validateSchema(value: unknown, schema: Schema, root: Schema, path = '$'): string[] {
  if (schema.$ref) {
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    const target = root.components.schemas[name];
    if (!target) return [`${path}: unknown $ref ${schema.$ref}`];
    return validateSchema(value, target, root, path);
  }
  if (schema.anyOf) {
    const results = (schema.anyOf as Schema[]).map((s) => validateSchema(value, s, root, path));
    return results.some((r) => r.length === 0) ? [] : [`${path}: matches none of anyOf (${results.map((r) => r[0]).join(' | ')})`];
  }
  const problems: string[] = [];
  if (schema.type !== undefined) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => hasType(value, t))) return [`${path}: expected ${types.join(' or ')}, got ${JSON.stringify(value)?.slice(0, 80)}`];
  }
  if (schema.enum && !(schema.enum as unknown[]).includes(value))
    problems.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (isObject(value)) {
    for (const key of (schema.required as string[] | undefined) ?? []) if (!(key in value)) problems.push(`${path}: missing ${key}`);
    for (const [key, sub] of Object.entries((schema.properties as Record<string, Schema> | undefined) ?? {})) {
      if (key in value) problems.push(...validateSchema(value[key], sub, root, `${path}.${key}`));
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => {
      problems.push(...validateSchema(item, schema.items, root, `${path}[${i}]`));
    });
  }
  return problems;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}
