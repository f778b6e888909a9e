package com.retrysafe.orders.web;

import java.util.List;
import java.util.Set;

import jakarta.inject.Singleton;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.Validator;

/**
 * A request body checked against the Bean Validation constraints of its type, called first thing in
 * the resource method. The answers are those of {@code @Valid @NotNull} on the parameter (ProblemMapper
 * maps both), but {@code @Valid} makes Hibernate Validator's method-validation interceptor wrap the
 * method; on a replay, which does little else, validating through it was 8.5 % of the service's CPU,
 * and validating the body itself is 3.9 % (bench/README.md, issue 17).
 */
@Singleton
public class BodyValidation {

    private final Validator validator;

    public BodyValidation(Validator validator) {
        this.validator = validator;
    }

    /** The body, if it is there and valid; otherwise a 400 {@code invalid-request} naming each bad field. */
    public <T> T valid(T body) {
        if (body == null) {
            throw ProblemException.invalidRequest(List.of(new Problem.Violation("body", "must not be null")));
        }
        Set<ConstraintViolation<T>> violations = validator.validate(body);
        if (!violations.isEmpty()) {
            throw new ConstraintViolationException(violations);
        }
        return body;
    }
}
