// GET /healthz: whether this process can reach its database (load balancers, `booking serve` readiness).
import { ping, type Db } from '../db/connect.js';

/** A load balancer should see "down" within about a second, whatever the database does (a frozen server). */
export const HEALTH_TIMEOUT_MS = 1_000;

/** true when the database answers a trivial query within `timeoutMs`; false on an error or past it. */
export async function checkHealth(db: Db, timeoutMs = HEALTH_TIMEOUT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    // the ping left behind past the bound ends on its own (the pool's connect and query timeouts)
    return await Promise.race([ping(db).then(() => true as const), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
