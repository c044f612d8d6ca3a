// /days and /slots answers over 1 KiB, compressed when the client asks (docs/api-integration.md): once per
// cached answer (app/answer-cache.ts keeps the answer and its JSON), not once per request. Compressing per
// request (@fastify/compress's onSend) cost the server about 40% of its /days throughput (bench/compression.ts).
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Negotiator } from '@fastify/accept-negotiator';
import { jsonBody, type ListAnswer } from '../../app/answer-cache.js';

/** Smaller answers are sent as they are: compressing them saves less than it costs. */
export const COMPRESS_FROM_BYTES = 1024;

type Encoding = 'br' | 'gzip';
// br first: about half gzip's size here; quality 4, as @fastify/compress uses for the OpenAPI document
const encodings = new Negotiator<Encoding>({ supportedValues: ['br', 'gzip'] });
const compressed = new WeakMap<ListAnswer, Partial<Record<Encoding, Buffer>>>();

function encode(body: Buffer, encoding: Encoding): Buffer {
  return encoding === 'br' ? brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }) : gzipSync(body);
}

export function sendListAnswer(request: FastifyRequest, reply: FastifyReply, answer: ListAnswer) {
  const body = jsonBody(answer);
  reply.header('content-type', 'application/json; charset=utf-8');
  if (body.length < COMPRESS_FROM_BYTES) return reply.send(body);
  // the answer depends on Accept-Encoding from here on: say so to caches
  reply.header('vary', 'accept-encoding');
  const accepted = request.headers['accept-encoding'];
  const encoding = accepted === undefined ? null : encodings.negotiate(accepted);
  if (encoding === null) return reply.send(body);
  let variants = compressed.get(answer);
  if (variants === undefined) compressed.set(answer, (variants = {}));
  return reply.header('content-encoding', encoding).send((variants[encoding] ??= encode(body, encoding)));
}
