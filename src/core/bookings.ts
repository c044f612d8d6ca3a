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
