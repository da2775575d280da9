import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openApiDocument, OPENAPI_DOCUMENT } from '../../../src/server/api/openapi-document.js';
import { route } from '../../../src/server/api/route.js';
import { API_ROUTES } from '../../../src/server/api/routes.js';
import { MAX_RETRY_NOTE } from '../../../src/server/retry-task.js';

const doc = OPENAPI_DOCUMENT as any;

describe('the OpenAPI document made from the route table', () => {
  it('lists every route of the table, and nothing else', () => {
    const declared = API_ROUTES.map((r) => `${r.method} ${r.path}`).sort();
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`))
      .sort();
    expect(documented).toEqual(declared);
  });

  it("shows the limits the server's own body schema checks", () => {
    const body = doc.paths['/api/tasks/{id}/retry'].post.requestBody.content['application/json'].schema;
    expect(body).toMatchObject({ type: 'object', additionalProperties: false });
    expect(body.properties.note.anyOf).toContainEqual({ type: 'string', maxLength: MAX_RETRY_NOTE });
  });

  it('marks each route that changes something as needing the token, with the answers of the guards', () => {
    for (const r of API_ROUTES.filter((r) => r.write)) {
      const op = doc.paths[r.path][r.method];
      expect(op.security, `${r.method} ${r.path}`).toEqual([{ bearer: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '415']));
    }
    expect(doc.paths['/api/health'].get.security).toBeUndefined();
  });

  it('refers to a named schema by $ref and writes an unnamed one where it is used', () => {
    const history = doc.paths['/api/history'].get.responses['200'].content['application/json'].schema;
    expect(history.properties.commits.items).toEqual({ $ref: '#/components/schemas/Commit' });
    expect(doc.components.schemas.Commit.description).toMatch(/^A commit of the accepted branch/);
    expect(Object.keys(doc.components.schemas)).toEqual([
      'Error',
      'Spend',
      'Commit',
      'EpisodeRow',
      'Task',
      'TaskSpec',
      'ReviewDecision',
      'Review',
      'RunStatus',
    ]);
  });

  it('documents a new route as declared: its parameters, body and answers', () => {
    const one = route({
      method: 'post',
      path: '/api/things/{id}',
      summary: 'makes a thing',
      write: true,
      params: { id: 'the thing' },
      query: { dry: { schema: z.boolean(), description: 'only say what it would do' } },
      body: { schema: z.object({ size: z.number().int().min(1) }).strict(), says: '{"size": <n>}' },
      ok: { status: 201, description: 'the thing', schema: z.looseObject({ id: z.string() }) },
      errors: { 409: 'it exists' },
    });
    const made = openApiDocument([one]) as any;
    const op = made.paths['/api/things/{id}'].post;
    expect(op.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'the thing' },
      { name: 'dry', in: 'query', required: false, schema: { type: 'boolean' }, description: 'only say what it would do' },
    ]);
    expect(op.requestBody.content['application/json'].schema).toEqual({
      type: 'object',
      properties: { size: { type: 'integer', minimum: 1 } },
      required: ['size'],
      additionalProperties: false,
    });
    expect(Object.keys(op.responses).sort()).toEqual(['201', '401', '403', '409', '415']);
  });
});
