package com.retrysafe.orders.idempotency;

import java.util.Map;

import com.retrysafe.orders.web.ProblemException;
import com.retrysafe.orders.web.ProblemType;

/**
 * The key's record changed under this request at every look: each time, the record it had lost its
 * claim to was gone when read (it had expired), or the accepted work it named had ended, and the
 * record read next had changed again. Rare, and not a fault of ours or of the database.
 *
 * <p>Nothing of this request was written (its claim never won), so {@code 503
 * temporarily-unavailable} is true (API.md section 2): a retry with the same key is safe, and
 * meets a record that has settled.
 */
public final class RecordKeptChangingException extends ProblemException {

    RecordKeptChangingException() {
        super(ProblemType.TEMPORARILY_UNAVAILABLE,
                "The record of this Idempotency-Key kept changing while this request was reading it; retrying with"
                        + " the same Idempotency-Key is safe",
                Map.of("Retry-After", "1"));
    }
}
