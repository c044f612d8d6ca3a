// A booking as stored: booked until it is cancelled (never deleted while its schedule exists), and who made it.
export type BookingStatus = 'booked' | 'cancelled';
/** the API (the operator's website) or the operator in the admin area */
export type BookingSource = 'api' | 'admin';

/**
 * Rules staff may set aside when booking by hand in the admin area (never through the API), each only when
 * ticked, and stored on the booking: the minimum notice, the horizon, the opening hours, the capacity.
 */
export const STAFF_OVERRIDES = ['notice', 'horizon', 'hours', 'capacity'] as const;
export type StaffOverride = (typeof STAFF_OVERRIDES)[number];

export const STAFF_OVERRIDE_LABELS: Record<StaffOverride, string> = {
  notice: 'minimum notice ignored',
  horizon: 'booking horizon ignored',
  hours: 'outside the opening hours',
  capacity: 'over capacity',
};

export const isStaffOverride = (value: string): value is StaffOverride => (STAFF_OVERRIDES as readonly string[]).includes(value);

/**
 * Whether the customer came, marked by the office once the appointment has begun. Kept beside the status: a
 * marked booking stays 'booked', so its time stays taken (docs/admin.md, "Statuses").
 */
export const ATTENDANCES = ['completed', 'no_show'] as const;
export type Attendance = (typeof ATTENDANCES)[number];

export const ATTENDANCE_LABELS: Record<Attendance, string> = { completed: 'completed', no_show: 'no-show' };

export const isAttendance = (value: unknown): value is Attendance => (ATTENDANCES as readonly unknown[]).includes(value);

/** The status as the office reads it: booked, cancelled, or, for a booked one marked afterwards, completed or no-show. */
export function statusLabel(b: { status: BookingStatus; attendance: Attendance | null }): string {
  return b.status === 'booked' && b.attendance ? ATTENDANCE_LABELS[b.attendance] : b.status;
}
