// Which routes give their tool an output schema: a 2xx JSON object schema on every success answer, or none.
import { expect } from 'chai';
import { Type } from '@sinclair/typebox';
import { toolsOf } from '../../src/mcp/tools.ts';
import { route, type ResponseSpec, type RouteSpec } from '../../src/http/route-table.ts';

const Thing = Type.Object({ id: Type.String() }, { $id: 'Thing', additionalProperties: false });
const Other = Type.Object({ name: Type.String() }, { additionalProperties: false });

function toolOf(responses: ResponseSpec[]) {
  const spec: RouteSpec = route({ method: 'POST', path: '/things', operationId: 'createThing', tag: 'Things', summary: 'Create a thing', auth: { kind: 'workspace', scope: 'links:write' }, responses, handler: () => undefined });
  return toolsOf([spec], new Set())[0]!;
}

describe('MCP tools: names and output schemas from the route table', () => {
  it('names a tool linkplane_ + the snake_case operationId, keeping the former name', () => {
    expect(toolOf([{ status: 201, description: 'The thing', schema: Thing }])).to.include({ name: 'linkplane_create_thing', legacyName: 'create_thing' });
  });

  it('publishes the 2xx object schema without its $id', () => {
    expect(toolOf([{ status: 201, description: 'The thing', schema: Thing }]).outputSchema).to.deep.equal({
      type: 'object',
      properties: { id: { type: 'string' } },
      required: ['id'],
      additionalProperties: false,
    });
  });

  it('unites distinct success schemas under an object anyOf, and merges identical ones', () => {
    const both = toolOf([
      { status: 200, description: 'Existing', schema: Thing },
      { status: 201, description: 'Created', schema: Other },
    ]).outputSchema as { type: string; anyOf: unknown[] };
    expect(both.type).to.equal('object');
    expect(both.anyOf).to.have.length(2);
    const same = toolOf([
      { status: 200, description: 'Existing', schema: Thing },
      { status: 201, description: 'Created', schema: Thing },
    ]).outputSchema as { type: string; anyOf?: unknown };
    expect(same.anyOf).to.equal(undefined);
  });

  it('declares none when a success answer has no schema, is not JSON, or is not an object', () => {
    expect(toolOf([{ status: 204, description: 'Deleted' }]).outputSchema).to.equal(undefined);
    expect(toolOf([{ status: 200, description: 'Existing', schema: Thing }, { status: 204, description: 'Nothing' }]).outputSchema).to.equal(undefined);
    expect(toolOf([{ status: 200, description: 'CSV', schema: Type.String(), contentType: 'text/csv' }]).outputSchema).to.equal(undefined);
    expect(toolOf([{ status: 200, description: 'A list', schema: Type.Array(Thing) }]).outputSchema).to.equal(undefined);
  });
});
