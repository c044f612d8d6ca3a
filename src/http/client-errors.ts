// Requests Node's HTTP parser refuses before Fastify sees them (a raw space or NUL in the request line, a
// header section over the size limit, a broken request line). Fastify's default answer is its own shape
// ({"error","message","statusCode"}); the contract says every error is {"error": "..."}. The request line,
// where it can still be read, decides like routing would: a GET under /api is "not found", as any
// malformed GET parameter is (docs/booking-api.md, Errors).
import type { Socket } from 'node:net';
import type { ConnectionError } from 'fastify';

/** Node's parser error codes for a header section over `maxHeaderSize` (llhttp's, and the one Node raises itself). */
const HEADER_OVERFLOW = new Set(['HPE_HEADER_OVERFLOW', 'ERR_HTTP_HEADERS_TOO_LARGE']);

/** What a refused request is answered with; `rawPacket` is what the parser had read of it, if anything. */
export function clientErrorAnswer(code: string | undefined, rawPacket: Buffer | undefined): { status: number; error: string } {
  if (code !== undefined && HEADER_OVERFLOW.has(code)) return { status: 431, error: 'Request Header Fields Too Large' };
  // the headers did not arrive within the server's headersTimeout: nothing is wrong with what did arrive
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, error: 'Request Timeout' };
  // only the first line matters, and only its start: method and the path's first segment
  const firstLine = rawPacket ? rawPacket.subarray(0, 256).toString('latin1').split('\r\n', 1)[0]! : '';
  return unreadableRequestAnswer(firstLine);
}

/** A request line (`METHOD target`) that routing cannot use: under GET /api "not found", like a malformed GET parameter. */
export function unreadableRequestAnswer(requestLine: string): { status: 400 | 404; error: string } {
  if (/^GET \/api(\/|\?|$| )/.test(requestLine)) return { status: 404, error: 'Not Found' };
  return { status: 400, error: 'Bad Request' };
}

/** Fastify's clientErrorHandler: writes the answer itself (nothing was routed) and closes the connection. */
export function handleClientError(error: ConnectionError, socket: Socket): void {
  // a connection reset or timed out has nobody left to answer
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  // Node hands over a Buffer (Fastify's type describes its JSON form)
  const raw: unknown = error.rawPacket;
  const { status, error: message } = clientErrorAnswer(error.code, Buffer.isBuffer(raw) ? raw : undefined);
  const body = JSON.stringify({ error: message });
  const reason = { 400: 'Bad Request', 404: 'Not Found', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[status];
  // then the socket is destroyed: the server allows half-open sockets, and a client that never closes
  // its side must not hold one
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}
