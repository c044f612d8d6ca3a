// The open-loop booking driver, forked by measure.ts's offerBookings: sends each POST /bookings at its fixed
// time (start + i / perSecond) without waiting for earlier answers, and times each answer from that
// scheduled time, so that a server falling behind shows as latency instead of as fewer requests sent.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface DriverCommand {
  url: string;
  headers: Record<string, string>;
  bodies: string[];
  perSecond: number;
  answerWithinMs: number;
}
export type DriverReport =
  | { type: 'listening' }
  | { type: 'ready' }
  | { type: 'done'; acceptedMs: number[]; others: Record<string, number>; queuedPastOneSecond: number; maxSendLagMs: number };

// Enough sockets for 100/s at 640 ms each; past that a request waits here for a socket, which its time
// (counted from its scheduled send) shows: it is already far out of target by then.
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function post(url: URL, headers: Record<string, string>, body: string): Promise<number | 'error'> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', () => resolve('error'));
      },
    );
    req.once('error', () => resolve('error'));
    req.end(body);
  });
}

/** A few keep-alive connections opened before the clock starts, so the first bookings do not pay for a connect. */
async function warmUp(url: URL, headers: Record<string, string>): Promise<void> {
  const health = new URL('/healthz', url);
  await Promise.all(
    Array.from(
      { length: 4 },
      () =>
        new Promise<void>((resolve, reject) => {
          request(health, { agent, headers }, (res) => {
            res.resume();
            res.once('end', resolve);
          })
            .once('error', reject)
            .end();
        }),
    ),
  );
}

async function run({ url, headers, bodies, perSecond, answerWithinMs }: DriverCommand): Promise<DriverReport> {
  const target = new URL(url);
  const acceptedMs: number[] = [];
  const others: Record<string, number> = {};
  let queuedPastOneSecond = 0;
  let maxSendLagMs = 0;
  let answered = 0;
  const interval = 1000 / perSecond;
  const start = performance.now();
  const deadline = start + bodies.length * interval + answerWithinMs;
  let allAnswered!: () => void;
  const finished = new Promise<void>((resolve) => {
    allAnswered = resolve;
  });

  const send = (i: number, scheduled: number) => {
    void post(target, headers, bodies[i]!).then((status) => {
      const took = performance.now() - scheduled;
      if (took > 1000) queuedPastOneSecond++;
      if (status === 201) acceptedMs.push(took);
      else others[String(status)] = (others[String(status)] ?? 0) + 1;
      if (++answered === bodies.length) allAnswered();
    });
  };
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (sent < bodies.length && start + sent * interval <= now) {
        const scheduled = start + sent * interval;
        maxSendLagMs = Math.max(maxSendLagMs, now - scheduled);
        send(sent++, scheduled);
      }
      if (sent < bodies.length) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
      else resolve();
    };
    tick();
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    finished,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - performance.now()));
    }),
  ]);
  clearTimeout(timer);
  const unanswered = bodies.length - answered;
  if (unanswered > 0) {
    others[`no answer within ${answerWithinMs / 1000} s`] = unanswered;
    queuedPastOneSecond += unanswered;
  }
  return { type: 'done', acceptedMs, others, queuedPastOneSecond, maxSendLagMs };
}

process.once('message', (command: DriverCommand) => {
  void warmUp(new URL(command.url), command.headers).then(() => {
    process.once('message', () => {
      void run(command).then((report) => {
        process.send!(report, () => {
          agent.destroy();
          process.exit(0);
        });
      });
    });
    process.send!({ type: 'ready' } satisfies DriverReport);
  });
});
// a message sent before this listener existed would be lost, so the parent waits for this one first
process.send!({ type: 'listening' } satisfies DriverReport);
