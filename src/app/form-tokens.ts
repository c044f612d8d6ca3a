// One-time form tokens (docs/admin.md "Forms"): every admin form that creates something carries a random
// token, recorded as used in the same transaction as the creation. A second submission of the same form
// (Back and submit again, a double click, a resend after a timeout) finds it and creates nothing; it is
// told "this form was already submitted", with a link to what the first one created. The record is in the
// database, so this holds across processes and instances; tokens are kept a day.
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { findUsedFormToken, recordFormToken } from '../db/repos/form-token.repository.js';

const KEPT_MS = 24 * 60 * 60 * 1000;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{16,64}$/;

export const newFormToken = () => randomBytes(18).toString('base64url');

export const isFormToken = (token: string) => TOKEN_SHAPE.test(token);

/** The form was submitted before (or carries no token, so a resubmission could not be recognised). */
export class AlreadySubmitted extends Error {
  constructor(
    /** the admin path of what the first submission created, '' when unknown */
    readonly outcome: string,
    readonly missingToken = false,
  ) {
    super(missingToken ? 'This form carries no one-time token.' : 'This form was already submitted.');
    this.name = 'AlreadySubmitted';
  }
}

/** Refuses a token already used or malformed; the check that counts is the one in the transaction (claimFormToken). */
export async function checkFormToken(db: Db, token: string): Promise<void> {
  if (!TOKEN_SHAPE.test(token)) throw new AlreadySubmitted('', true);
  const outcome = await findUsedFormToken(db.kysely, token);
  if (outcome !== null) throw new AlreadySubmitted(outcome);
}

/**
 * What a creating use-case runs inside its transaction once it has created something: records the token
 * with the path of what was created, and throws (rolling the creation back) when a concurrent submission
 * of the same form got there first.
 */
export function claimFormToken<T>(token: string, now: number, outcome: (created: T) => string) {
  return async (trx: Db['kysely'], created: T): Promise<void> => {
    if (!TOKEN_SHAPE.test(token)) throw new AlreadySubmitted('', true);
    const path = outcome(created);
    if (!(await recordFormToken(trx, token, now, path, now - KEPT_MS)))
      throw new AlreadySubmitted((await findUsedFormToken(trx, token)) ?? '');
  };
}

/** Runs in the creating transaction after the creation, with what was created. */
export type OnCreated<T> = (trx: Db['kysely'], created: T) => Promise<void>;
