// GET /healthz: whether this process can reach its database (load balancers, `booking serve` readiness).
import { ping, type Db } from '../db/connect.js';

export async function checkHealth(db: Db): Promise<boolean> {
  try {
    await ping(db);
    return true;
  } catch {
    return false;
  }
}
