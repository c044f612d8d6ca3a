// The mail benchmark's SMTP server, forked by mail-throughput.ts into a process of its own so that the
// `serve` under test is measured by its own CPU time: a real smtp-server on loopback that answers 250
// after BENCH_MAIL_DELAY_MS (as a real server takes a moment) and notes when each message arrived, keyed
// by the outbox id in its Message-ID (<outbox-ID.…>).
import { SMTPServer } from 'smtp-server';

export type SinkCommand = 'report' | 'reset';
export type SinkReport =
  { type: 'listening'; port: number } | { type: 'arrivals'; ids: number[]; at: number[]; duplicates: number; cpuMs: number };

const delayMs = Number(process.argv[2] ?? 0);
let ids: number[] = [];
let at: number[] = [];
let seen = new Set<number>();
let duplicates = 0;
let cpuFrom = process.cpuUsage();

const server = new SMTPServer({
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  maxClients: 200,
  onData(stream, _session, callback) {
    let head = '';
    stream.on('data', (chunk: Buffer) => {
      if (head.length < 2000) head += chunk.toString('latin1');
    });
    stream.on('end', () => {
      setTimeout(() => {
        const id = Number(/^message-id:\s*<outbox-(\d+)\./im.exec(head)?.[1] ?? NaN);
        if (seen.has(id)) duplicates += 1;
        seen.add(id);
        ids.push(id);
        at.push(Date.now());
        callback();
      }, delayMs);
    });
  },
});

server.listen(0, '127.0.0.1', () => {
  const address = server.server.address();
  process.send!({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 } satisfies SinkReport);
});

process.on('message', (command: SinkCommand) => {
  if (command === 'report') {
    const cpu = process.cpuUsage(cpuFrom);
    process.send!({ type: 'arrivals', ids, at, duplicates, cpuMs: (cpu.user + cpu.system) / 1000 } satisfies SinkReport);
  } else {
    ids = [];
    at = [];
    seen = new Set();
    duplicates = 0;
    cpuFrom = process.cpuUsage();
  }
});
process.on('disconnect', () => process.exit(0));
