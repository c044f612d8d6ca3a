// Ids in URLs (docs/decisions.md §1): decimal, no leading zero, within the id column's range. The API's schemas
// validate with the pattern; the admin area and the API gate read a value with idParam.
export const ID_PATTERN = '^[1-9][0-9]{0,9}$';

const ID = new RegExp(ID_PATTERN);
export const MAX_ID = 2_147_483_647;

/** A well-formed id as a number, or null (also beyond the id column's range, where no row can exist). */
export function idParam(value: unknown): number | null {
  return typeof value === 'string' && ID.test(value) && Number(value) <= MAX_ID ? Number(value) : null;
}
