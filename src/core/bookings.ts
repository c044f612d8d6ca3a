// A booking as stored: booked until it is cancelled (never deleted while its schedule exists), and who made it.
export type BookingStatus = 'booked' | 'cancelled';
/** the API (the operator's website) or the operator in the admin area */
export type BookingSource = 'api' | 'admin';
