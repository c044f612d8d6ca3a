// Generated from /api/openapi.json by `npm run client:generate` (scripts/openapi-document.ts) with
// openapi-typescript. Do not edit: change the route schemas (src/http/api/) and regenerate.

export interface paths {
    "/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the schedules
         * @description All schedules of the installation, by ascending id (creation order). Step 1 of the booking flow: gives the `schedule` id.
         */
        get: operations["listSchedules"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/reasons": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the reasons of a schedule
         * @description The appointment reasons (services) of one schedule, by ascending id; an empty list when none is configured. Step 2: gives the `reason` id and the duration.
         */
        get: operations["listReasons"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/days": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the days with free times
         * @description The local dates, ascending, from today to the end of the schedule's horizon, that have at least one free time for the reason. Step 3. The Time-Zone header names the installation's time zone.
         */
        get: operations["listDays"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/slots": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the free times of a day
         * @description The free start times of one day, ascending, as wall-clock times in the installation's time zone (the Time-Zone header names it); an empty list when nothing is free that day. A day outside today..horizon is 404. Step 4.
         */
        get: operations["listSlots"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/forms": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get the booking form for a time
         * @description The fields to fill for booking the time, keyed by field name in the operator's order; the set differs per schedule, so fetch it rather than hard-code it. A time that is not free (any more) is 404. Step 5.
         */
        get: operations["getForm"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/bookings": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a booking
         * @description Books the time and creates (or updates, matched by e-mail address) the customer record; queues the confirmation and notification e-mails. The time is re-checked in the transaction that stores the booking: of two requests for the last place, one gets 201 and the other 404 "Time not available". Step 6.
         */
        post: operations["createBooking"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description A bookable calendar (a person, a room) */
        Schedule: {
            /** @description The `schedule` parameter of the other calls */
            id: number;
            name: string;
        };
        /** @description An appointment reason (service) of one schedule */
        Reason: {
            /** @description The `reason` parameter of the other calls */
            id: number;
            name: string;
            /** @description May be empty */
            description: string;
            /** @description Seconds (1800 is 30 minutes) */
            duration: number;
        };
        /**
         * Format: date
         * @description A local date with at least one free time
         */
        Day: string;
        /** @description A free time: YYYY-MM-DD HH:MM:SS, a wall-clock time in the installation's time zone (the Time-Zone header names it) */
        Slot: string;
        /** @description One field of a schedule's booking form */
        FormField: {
            form_type: "textbox" | "textarea" | "checkbox" | "select";
            input_type: "text" | "email" | "tel" | "number" | "date";
            /** @description Display label */
            label: string;
            /** @description The field must be filled on booking (a required checkbox must be true) */
            required: boolean;
            /** @description Default value */
            value: string;
            /** @description Choices of a select */
            options?: string[];
        };
        /** @description A booking to create */
        BookingRequest: {
            /** @description Schedule id */
            schedule: number;
            /** @description Reason id */
            reason: number;
            /** @description A time from GET /slots: YYYY-MM-DD HH:MM:SS, a wall-clock time in the installation's time zone (the Time-Zone header names it) */
            slot: string;
            /** @description Values keyed by the field names of GET /forms; keys the form does not define are ignored. Validated in the form's order, the first failure answers 400 naming the field */
            submission: {
                [key: string]: string | number | boolean;
            };
        };
        /** @description The booking created */
        BookingResponse: {
            booking_id: number;
            /** @description Opaque; identifies the booking in the customer's links */
            booking_details_id: string;
            /** @description Customer record id */
            user_id: number;
            /** @description The booked time in UTC */
            slot: string;
        };
        /** @description Every error: {"error": "..."} */
        Error: {
            /** @description What went wrong */
            error: string;
        };
        /** @description A refused booking request; `field` names the offending field on a validation error */
        BookingError: {
            /** @description What went wrong */
            error: string;
            /** @description The offending field: a top-level field of the body or a submission field */
            field?: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    listSchedules: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Schedules by ascending id */
            200: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Schedule"][];
                    };
                };
            };
            /** @description Token missing, wrong or replaced. Messages: "Unauthorized" */
            401: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Bearer realm="api": the token goes in Authorization: Bearer <token> */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Unauthorized";
                    };
                };
            };
            /** @description Request limit reached (per token, per minute). Messages: "Too Many Requests" */
            429: {
                headers: {
                    /** @description Whole seconds (at least 1) until the window closes and requests are accepted again */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Too Many Requests";
                    };
                };
            };
            /** @description API switched off ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After). Messages: "API disabled", "Not configured", "Service Unavailable" */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying; sent while the database cannot answer */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "API disabled" | "Not configured" | "Service Unavailable";
                    };
                };
            };
        };
    };
    listReasons: {
        parameters: {
            query: {
                /** @description An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404 */
                schedule: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Reasons by ascending id; empty when none is configured */
            200: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Reason"][];
                    };
                };
            };
            /** @description Token missing, wrong or replaced. Messages: "Unauthorized" */
            401: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Bearer realm="api": the token goes in Authorization: Bearer <token> */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Unauthorized";
                    };
                };
            };
            /** @description Schedule not found, or a parameter missing or badly formatted (GET calls answer 404, not 400). Messages: "Schedule not found" */
            404: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Schedule not found";
                    };
                };
            };
            /** @description Request limit reached (per token, per minute). Messages: "Too Many Requests" */
            429: {
                headers: {
                    /** @description Whole seconds (at least 1) until the window closes and requests are accepted again */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Too Many Requests";
                    };
                };
            };
            /** @description API switched off ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After). Messages: "API disabled", "Not configured", "Service Unavailable" */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying; sent while the database cannot answer */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "API disabled" | "Not configured" | "Service Unavailable";
                    };
                };
            };
        };
    };
    listDays: {
        parameters: {
            query: {
                /** @description An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404 */
                schedule: number;
                /** @description An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404 */
                reason: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Days, ascending */
            200: {
                headers: {
                    /** @description The installation's IANA time zone (e.g. Europe/Berlin): the zone of every day and slot */
                    "Time-Zone"?: string;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Day"][];
                    };
                };
            };
            /** @description Token missing, wrong or replaced. Messages: "Unauthorized" */
            401: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Bearer realm="api": the token goes in Authorization: Bearer <token> */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Unauthorized";
                    };
                };
            };
            /** @description Schedule or reason not found, or a parameter missing or badly formatted (GET calls answer 404, not 400). Messages: "Schedule not found", "Reason not found" */
            404: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Schedule not found" | "Reason not found";
                    };
                };
            };
            /** @description Request limit reached (per token, per minute). Messages: "Too Many Requests" */
            429: {
                headers: {
                    /** @description Whole seconds (at least 1) until the window closes and requests are accepted again */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Too Many Requests";
                    };
                };
            };
            /** @description API switched off ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After). Messages: "API disabled", "Not configured", "Service Unavailable" */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying; sent while the database cannot answer */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "API disabled" | "Not configured" | "Service Unavailable";
                    };
                };
            };
        };
    };
    listSlots: {
        parameters: {
            query: {
                /** @description An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404 */
                schedule: number;
                /** @description An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404 */
                reason: number;
                /** @description A day from GET /days (YYYY-MM-DD, local date) */
                day: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Free times, ascending; empty when nothing is free that day */
            200: {
                headers: {
                    /** @description The installation's IANA time zone (e.g. Europe/Berlin): the zone of every day and slot */
                    "Time-Zone"?: string;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: components["schemas"]["Slot"][];
                    };
                };
            };
            /** @description Token missing, wrong or replaced. Messages: "Unauthorized" */
            401: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Bearer realm="api": the token goes in Authorization: Bearer <token> */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Unauthorized";
                    };
                };
            };
            /** @description Schedule, reason or day not found, or a parameter missing or badly formatted (GET calls answer 404, not 400). Messages: "Schedule not found", "Reason not found", "Day not found" */
            404: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Schedule not found" | "Reason not found" | "Day not found";
                    };
                };
            };
            /** @description Request limit reached (per token, per minute). Messages: "Too Many Requests" */
            429: {
                headers: {
                    /** @description Whole seconds (at least 1) until the window closes and requests are accepted again */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Too Many Requests";
                    };
                };
            };
            /** @description API switched off ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After). Messages: "API disabled", "Not configured", "Service Unavailable" */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying; sent while the database cannot answer */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "API disabled" | "Not configured" | "Service Unavailable";
                    };
                };
            };
        };
    };
    getForm: {
        parameters: {
            query: {
                /** @description An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404 */
                schedule: number;
                /** @description An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404 */
                reason: number;
                /** @description A time from GET /slots: YYYY-MM-DD HH:MM:SS, a wall-clock time in the installation's time zone (the Time-Zone header names it); the space is encoded as %20 */
                slot: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Fields keyed by name, in the operator's order */
            200: {
                headers: {
                    /** @description The installation's IANA time zone (e.g. Europe/Berlin): the zone of every day and slot */
                    "Time-Zone"?: string;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            [key: string]: components["schemas"]["FormField"];
                        };
                    };
                };
            };
            /** @description Token missing, wrong or replaced. Messages: "Unauthorized" */
            401: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Bearer realm="api": the token goes in Authorization: Bearer <token> */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Unauthorized";
                    };
                };
            };
            /** @description Schedule, reason or time not found, or a parameter missing or badly formatted (GET calls answer 404, not 400). Messages: "Schedule not found", "Reason not found", "Time not available" */
            404: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Schedule not found" | "Reason not found" | "Time not available";
                    };
                };
            };
            /** @description Request limit reached (per token, per minute). Messages: "Too Many Requests" */
            429: {
                headers: {
                    /** @description Whole seconds (at least 1) until the window closes and requests are accepted again */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Too Many Requests";
                    };
                };
            };
            /** @description API switched off ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After). Messages: "API disabled", "Not configured", "Service Unavailable" */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying; sent while the database cannot answer */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "API disabled" | "Not configured" | "Service Unavailable";
                    };
                };
            };
        };
    };
    createBooking: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes retrying safe: 1 to 255 printable ASCII characters, unique per booking attempt (a UUID, say). The first answer (201, 400 about the submission, 404) is kept with the key for at least 24 hours; a retry with the same key and body gets the same status and body with Idempotent-Replayed: true, and books nothing. The same key with a different body answers 400. A request whose key is still being answered by another request waits for that answer. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The booking to create */
        requestBody: {
            content: {
                "application/json": components["schemas"]["BookingRequest"];
            };
        };
        responses: {
            /** @description The booking */
            201: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    /** @description true when this answer is the stored answer to an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BookingResponse"];
                };
            };
            /** @description Invalid JSON, a body of the wrong shape ("field" names the top-level field), or a submission value that breaks its field's rule ("field" names the submission field; "Field is required" when a required one is missing, empty or blank). Body messages: "Invalid JSON", "Invalid JSON: empty body", "Invalid request: the body must be a JSON object", "Invalid request: schedule is required", "Invalid request: reason is required", "Invalid request: slot is required", "Invalid request: submission is required", "Invalid request: schedule must be an integer >= 1", "Invalid request: reason must be an integer >= 1", "Invalid request: slot must be a string YYYY-MM-DD HH:MM:SS of exactly 19 characters", "Invalid request: submission must be an object". Submission messages: "Field is required", "Must be an e-mail address", "Must be a phone number", "Must be a number", "Must be a date (YYYY-MM-DD)", "Must be one of the options", "Must be true or false", "Must be a string", "Must be at most 1000 characters", "Must not contain control characters", "Must be a single line". With an Idempotency-Key: "Invalid Idempotency-Key: send 1 to 255 printable ASCII characters", or "Idempotency-Key reused with a different request" */
            400: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    /** @description true when this answer is the stored answer to an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["BookingError"];
                };
            };
            /** @description Token missing, wrong or replaced. Messages: "Unauthorized" */
            401: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Bearer realm="api": the token goes in Authorization: Bearer <token> */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Unauthorized";
                    };
                };
            };
            /** @description Unknown schedule or reason, or a well-formed time that is not free (taken, closed, past, beyond the horizon, off the grid). Messages: "Schedule not found", "Reason not found", "Time not available" */
            404: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    /** @description true when this answer is the stored answer to an earlier request with the same Idempotency-Key */
                    "Idempotent-Replayed"?: "true";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Schedule not found" | "Reason not found" | "Time not available";
                    };
                };
            };
            /** @description Body over 64 KiB. Messages: "Payload Too Large" */
            413: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Payload Too Large";
                    };
                };
            };
            /** @description Content-Type: application/json missing. Messages: "Unsupported Media Type: send Content-Type: application/json" */
            415: {
                headers: {
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Unsupported Media Type: send Content-Type: application/json";
                    };
                };
            };
            /** @description Request limit reached (per token, per minute). Messages: "Too Many Requests" */
            429: {
                headers: {
                    /** @description Whole seconds (at least 1) until the window closes and requests are accepted again */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "Too Many Requests";
                    };
                };
            };
            /** @description The customer record or the booking could not be saved (with Retry-After when the database cannot answer). Messages: "The booking could not be saved" */
            500: {
                headers: {
                    /** @description Seconds to wait before retrying; sent while the database cannot answer */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    /** @description Requests allowed per 60-second window for this token */
                    "RateLimit-Limit"?: number;
                    /** @description Requests left in the current window */
                    "RateLimit-Remaining"?: number;
                    /** @description Whole seconds until the current window closes (at least 1) */
                    "RateLimit-Reset"?: number;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "The booking could not be saved";
                    };
                };
            };
            /** @description API switched off ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After). Messages: "API disabled", "Not configured", "Service Unavailable". With an Idempotency-Key: "A request with this Idempotency-Key is still in progress: retry later" (Retry-After: 1) when another request holding the key has not answered within 10 s */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying; sent while the database cannot answer */
                    "Retry-After"?: number;
                    /** @description The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it */
                    "X-Request-Id"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Error"] & {
                        /** @enum {string} */
                        error: "API disabled" | "Not configured" | "Service Unavailable";
                    };
                };
            };
        };
    };
}
