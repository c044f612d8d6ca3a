// The README's example (docs/api-client.md): books the first free time. Type-checked with the project and
// run against a real server by test/integration/client.test.ts, so the example cannot rot.
import { BookingApiError, BookingClient } from './src/index.js';

export async function bookFirstFreeTime(baseUrl: string, token: string, email: string) {
  const api = new BookingClient({ baseUrl, token });
  const schedule = (await api.schedules())[0]!.id;
  const reason = (await api.reasons(schedule))[0]!.id;
  const day = (await api.days(schedule, reason))[0]!;
  const slot = (await api.slots(schedule, reason, day))[0]!; // a wall-clock time in api.timeZone
  const form = await api.form(schedule, reason, slot); // e.g. form.email.required
  try {
    return await api.book({ schedule, reason, slot, submission: { email, ...(form.first_name ? { first_name: 'Ada' } : {}) } });
  } catch (error) {
    if (error instanceof BookingApiError && error.is(404, 'Time not available')) return null; // just taken: ask again
    throw error;
  }
}
