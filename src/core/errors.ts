// Domain errors carry no HTTP status: the HTTP layer maps them in one place (src/http/errors.ts).

/**
 * Input that breaks a rule. `reason` says what is wrong; `path` says where, when there is a where: a field
 * ("admin_email") or a place in a nested document ("schedules[0].weekly_hours.mon[1]"). `message` is the
 * text the API and the CLI print: the reason, or the reason with its place when that reads better.
 */
export class InvalidInput extends Error {
  constructor(
    readonly reason: string,
    readonly path?: string,
    message: string = reason,
  ) {
    super(message);
    this.name = 'InvalidInput';
  }

  /** The reason with its path in front, as `booking import` names a problem in the file. */
  static at(path: string, reason: string): InvalidInput {
    return new InvalidInput(reason, path, `${path}: ${reason}`);
  }
}

/** Something asked for does not exist or is not available (an unknown id, a time that is not free). */
export class NotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFound';
  }
}

/** The request is well-formed but the installation's state forbids it (e.g. deleting a schedule with bookings). */
export class Conflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Conflict';
  }
}

/**
 * The database cannot answer right now (unreachable, restarting, frozen past the statement timeout, an
 * SQLite write lock held past the busy timeout). The database layer turns the drivers' errors into this
 * one (db/unavailable.ts); the HTTP layer answers 503 with Retry-After (POST /bookings: the contract's 500).
 */
export class DatabaseUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseUnavailable';
  }
}
