// Domain errors carry no HTTP status: the HTTP layer maps them in one place (src/http/errors.ts).

/** Input that breaks a rule; `field` names the offending field when there is one. */
export class InvalidInput extends Error {
  constructor(message: string, readonly field?: string) {
    super(message);
    this.name = 'InvalidInput';
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
