package com.retrysafe.orders.idempotency;

import java.util.List;
import java.util.regex.Pattern;

import org.greenbytes.http.sfv.Item;
import org.greenbytes.http.sfv.ParseException;
import org.greenbytes.http.sfv.Parser;
import org.greenbytes.http.sfv.StringItem;

import com.retrysafe.orders.web.ProblemException;
import com.retrysafe.orders.web.ProblemType;

/**
 * A validated {@code Idempotency-Key}, without quotes. The strict alphabet also keeps keys safe to
 * log: only this form is ever logged or stored.
 */
public record IdempotencyKey(String value) {

    public static final String HEADER = "Idempotency-Key";

    private static final Pattern FORMAT = Pattern.compile("[A-Za-z0-9_-]{16,128}");

    public IdempotencyKey {
        if (value == null || !FORMAT.matcher(value).matches()) {
            throw invalid("Idempotency-Key must be 16 to 128 characters of A-Z, a-z, 0-9, '_' or '-'");
        }
    }

    /** From every value of the header: exactly one is allowed, since two would be ambiguous. */
    public static IdempotencyKey fromHeader(List<String> values) {
        if (values == null || values.isEmpty()) {
            throw new ProblemException(ProblemType.MISSING_IDEMPOTENCY_KEY,
                    "This operation needs an Idempotency-Key header");
        }
        if (values.size() > 1) {
            throw invalid("Send exactly one Idempotency-Key header");
        }
        return parse(values.getFirst());
    }

    /**
     * The field as the IETF Idempotency-Key draft writes it, an RFC 8941 sf-string
     * ({@code "8e03978e-40d5-43e8-bc93-6894a57f9324"}), or as a bare token (Stripe's habit): both
     * name the same key. A bare key can't be read as a Structured Field (one starting with a digit
     * is no sf-token), so only a field with a quote in it is parsed by the Structured Fields rules.
     */
    static IdempotencyKey parse(String field) {
        return new IdempotencyKey(field.indexOf('"') < 0 ? field : sfString(field));
    }

    /**
     * The content of a field that must be exactly one sf-string Item without parameters. An
     * unterminated string, a bad escape, a list or anything after the string fails the parse; a
     * valid escape leaves a quote or a backslash, which the key's alphabet refuses.
     */
    private static String sfString(String field) {
        Item<? extends Object> item;
        try {
            item = Parser.parseItem(field);
        } catch (ParseException e) {
            // The parser's message quotes the raw field: it is not passed on, not even to a log.
            throw invalid("A quoted Idempotency-Key must be one Structured Field String (RFC 8941), "
                    + "without parameters");
        }
        if (!(item instanceof StringItem string) || !item.getParams().isEmpty()) {
            throw invalid("A quoted Idempotency-Key must be one Structured Field String (RFC 8941), "
                    + "without parameters");
        }
        return string.get();
    }

    private static ProblemException invalid(String detail) {
        return new ProblemException(ProblemType.INVALID_IDEMPOTENCY_KEY, detail);
    }

    @Override
    public String toString() {
        return value;
    }
}
