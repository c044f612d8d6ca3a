// A TCP relay on loopback to a real server (PostgreSQL, Redis) that a test can cut and restore, so the
// server "goes away" for one client without being stopped for everyone.
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { once } from 'node:events';

export class TcpRelay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly port: number,
    private readonly targetPort: number,
    private readonly targetHost = '127.0.0.1',
  ) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = tcpConnect({ host: this.targetHost, port: this.targetPort });
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    server.listen(this.port, '127.0.0.1');
    await once(server, 'listening');
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}
