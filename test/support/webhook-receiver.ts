// A real webhook receiver for the tests: node:http on 127.0.0.1, on a fixed port so that it can go down and
// come back at the same address. Every request is verified with the documented snippet (verify-webhook.ts)
// and kept, in arrival order. What it answers is switchable: 204, an error status, or no answer at all.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { freePort } from './processes.js';
import { verifyWebhook, type BookingEvent } from './verify-webhook.js';

export interface ReceivedWebhook {
  headers: IncomingMessage['headers'];
  body: string;
  /** the verified event, or null when verification failed */
  event: BookingEvent | null;
  error: string | null;
}

export type ReceiverMode = { answer: number } | { hang: true };

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  mode: ReceiverMode = { answer: 204 };
  /** with mode hang: the one path that hangs (the others answer 204); null: every path */
  hangOnly: string | null = null;
  private server: Server | null = null;
  private readonly hanging = new Set<ServerResponse>();
  /** secrets the receiver accepts, by URL path (one endpoint per path) */
  readonly secrets = new Map<string, string>();

  private constructor(readonly port: number) {}

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(await freePort());
    await receiver.up();
    return receiver;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** the verified events that arrived at `path` */
  events(path = '/hook'): BookingEvent[] {
    return this.received.filter((r) => r.event && r.headers['x-path'] === path).map((r) => r.event!);
  }

  get hangingCount(): number {
    return this.hanging.size;
  }

  async up(): Promise<void> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const path = request.url ?? '';
        const secret = this.secrets.get(path) ?? '';
        let event: BookingEvent | null = null;
        let error: string | null = null;
        try {
          event = verifyWebhook(secret, request.headers, body);
        } catch (e) {
          error = (e as Error).message;
        }
        this.received.push({ headers: { ...request.headers, 'x-path': path }, body, event, error });
        const mode = this.mode;
        if ('hang' in mode && (this.hangOnly === null || this.hangOnly === path)) {
          this.hanging.add(response);
          response.on('close', () => this.hanging.delete(response));
          return;
        }
        response.writeHead(error ? 401 : 'answer' in mode ? mode.answer : 204, { 'content-type': 'text/plain' }).end(error ?? 'ok');
      });
    });
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(this.port, '127.0.0.1', () => ok());
    });
    this.server = server;
  }

  /** Stops listening and drops every connection (requests left unanswered included). */
  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    for (const response of this.hanging) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  }
}
