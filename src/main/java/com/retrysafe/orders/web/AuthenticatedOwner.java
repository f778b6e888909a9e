package com.retrysafe.orders.web;

import java.util.OptionalLong;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;

import org.eclipse.microprofile.jwt.JsonWebToken;

import com.retrysafe.orders.overload.RequestBudget;

/**
 * The owner of a request is the token's {@code sub}, which must be a positive 64-bit integer.
 * Anything else is a token we cannot attribute, hence 401 rather than 400.
 */
@ApplicationScoped
public class AuthenticatedOwner {

    private static final Pattern POSITIVE_LONG = Pattern.compile("[1-9][0-9]{0,18}");

    private final JsonWebToken token;

    public AuthenticatedOwner(JsonWebToken token) {
        this.token = token;
    }

    public long id() {
        OptionalLong owner = ownerIdOf(token.getSubject());
        if (owner.isEmpty()) {
            throw ProblemException.unauthorized("The token's subject must be a positive 64-bit integer");
        }
        // Where the owner becomes known, it takes one of its places (API.md section 12).
        RequestBudget.admitOwner(owner.getAsLong());
        return owner.getAsLong();
    }

    /** The owner a token's {@code sub} names: a positive 64-bit integer, else none. */
    public static OptionalLong ownerIdOf(String subject) {
        if (subject != null && POSITIVE_LONG.matcher(subject).matches()) {
            try {
                return OptionalLong.of(Long.parseLong(subject));
            } catch (NumberFormatException overflow) {
                // 19 digits above Long.MAX_VALUE.
            }
        }
        return OptionalLong.empty();
    }
}
