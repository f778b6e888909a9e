package com.retrysafe.orders.idempotency.cache;

/**
 * The outcome of trying to mark a key as in flight.
 *
 * @param token this request's marker, to release it later; {@code null} when none was set
 * @param contended the key already had a marker or a result: another request is (or was) on it
 */
public record InFlightMarker(String token, boolean contended) {

    public static final InFlightMarker NONE = new InFlightMarker(null, false);
    static final InFlightMarker CONTENDED = new InFlightMarker(null, true);
}
