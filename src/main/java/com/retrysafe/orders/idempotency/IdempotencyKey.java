package com.retrysafe.orders.idempotency;

import java.util.List;
import java.util.regex.Pattern;

import com.retrysafe.orders.web.ProblemException;
import com.retrysafe.orders.web.ProblemType;

/** A validated {@code Idempotency-Key}. The strict alphabet also keeps keys safe to log. */
public record IdempotencyKey(String value) {

    public static final String HEADER = "Idempotency-Key";

    private static final Pattern FORMAT = Pattern.compile("[A-Za-z0-9_-]{16,128}");

    public IdempotencyKey {
        if (value == null || !FORMAT.matcher(value).matches()) {
            throw new ProblemException(ProblemType.INVALID_IDEMPOTENCY_KEY,
                    "Idempotency-Key must be 16 to 128 characters of A-Z, a-z, 0-9, '_' or '-'");
        }
    }

    /** From every value of the header: exactly one is allowed, since two would be ambiguous. */
    public static IdempotencyKey fromHeader(List<String> values) {
        if (values == null || values.isEmpty()) {
            throw new ProblemException(ProblemType.MISSING_IDEMPOTENCY_KEY,
                    "This operation needs an Idempotency-Key header");
        }
        if (values.size() > 1) {
            throw new ProblemException(ProblemType.INVALID_IDEMPOTENCY_KEY,
                    "Send exactly one Idempotency-Key header");
        }
        return new IdempotencyKey(values.getFirst());
    }

    @Override
    public String toString() {
        return value;
    }
}
