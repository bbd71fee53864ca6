// What the API answers for each status the MCP transport can refuse a request with: the spec's envelope, with the
// code that status means; the transport's own 5xx is ours, `internal` with its message kept out of the answer.
import { expect } from 'chai';
import { refusalOf } from '../../src/mcp/mcp.routes.ts';
import { toErrorResponse } from '../../src/http/error-response.ts';

const rpcError = (status: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }), { status, headers: { 'Content-Type': 'application/json' } });

async function answered(response: Response) {
  const { status, body, unexpected } = toErrorResponse(await refusalOf(response), 'https://api.example');
  return { status, code: body.error.code, message: body.error.message, unexpected };
}

describe('MCP transport refusals in the error envelope', () => {
  it('keeps the status of a client mistake and answers invalid_request with the transport’s reason', async () => {
    expect(await answered(rpcError(406, 'Not Acceptable: Client must accept both application/json and text/event-stream'))).to.deep.equal({
      status: 406,
      code: 'invalid_request',
      message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
      unexpected: false,
    });
    expect(await answered(rpcError(415, 'Unsupported Media Type'))).to.include({ status: 415, code: 'invalid_request' });
    expect(await answered(rpcError(400, 'Parse error: Invalid JSON-RPC message'))).to.include({ status: 400, code: 'invalid_request' });
  });

  it('answers a missing session not_found, a conflict conflict and a refused origin forbidden', async () => {
    expect(await answered(rpcError(404, 'Session not found'))).to.include({ status: 404, code: 'not_found' });
    expect(await answered(rpcError(409, 'Conflict: Only one SSE stream is allowed per session'))).to.include({ status: 409, code: 'conflict' });
    expect(await answered(rpcError(403, 'Invalid Host header'))).to.include({ status: 403, code: 'forbidden' });
  });

  it('turns a 5xx into internal, logged as unexpected, without the transport’s message', async () => {
    expect(await answered(rpcError(500, 'Error replaying events'))).to.deep.equal({ status: 500, code: 'internal', message: 'An unexpected error occurred.', unexpected: true });
  });

  it('gives a reason when the refusal has no JSON-RPC body', async () => {
    const { status, code, message } = await answered(new Response('nope', { status: 400 }));
    expect({ status, code }).to.deep.equal({ status: 400, code: 'invalid_request' });
    expect(message).to.contain('400');
  });
});
