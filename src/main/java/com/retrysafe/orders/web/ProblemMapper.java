package com.retrysafe.orders.web;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.ElementKind;
import jakarta.validation.Path;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.HttpHeaders;

import org.jboss.logging.Logger;
import org.jboss.resteasy.reactive.RestResponse;
import org.jboss.resteasy.reactive.server.ServerExceptionMapper;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.retrysafe.orders.db.DatabaseErrors;
import com.retrysafe.orders.db.OutcomeUnknownException;
import com.retrysafe.orders.overload.BudgetSpentException;
import com.retrysafe.orders.overload.TooManyRequestsException;

import io.quarkus.security.AuthenticationFailedException;
import io.quarkus.security.ForbiddenException;
import io.quarkus.security.UnauthorizedException;

/**
 * The one place that turns failures into {@code application/problem+json}. Details are written
 * here, never copied from an exception message, so no class name, SQL or stack trace reaches a
 * client.
 */
public class ProblemMapper {

    private static final Logger LOG = Logger.getLogger(ProblemMapper.class);

    private final ProblemWriter writer;

    public ProblemMapper(ProblemWriter writer) {
        this.writer = writer;
    }

    @ServerExceptionMapper
    public RestResponse<String> problem(ProblemException e) {
        LOG.debugf("%d %s: %s", e.status(), e.type().slug(), e.getMessage());
        return writer.response(e.toProblem(), e.headers());
    }

    @ServerExceptionMapper
    public RestResponse<String> invalidFields(ConstraintViolationException e) {
        List<Problem.Violation> violations = new ArrayList<>();
        for (ConstraintViolation<?> violation : e.getConstraintViolations()) {
            violations.add(new Problem.Violation(fieldOf(violation.getPropertyPath()), violation.getMessage()));
        }
        violations.sort(Comparator.comparing(Problem.Violation::field).thenComparing(Problem.Violation::message));
        LOG.debugf("400 invalid-request: %s", violations);
        return writer.response(ProblemException.invalidRequest(violations).toProblem(), Map.of());
    }

    @ServerExceptionMapper
    public RestResponse<String> mismatchedInput(MismatchedInputException e) {
        return invalidJson(e);
    }

    @ServerExceptionMapper
    public RestResponse<String> malformedJson(JsonParseException e) {
        return invalidJson(e);
    }

    @ServerExceptionMapper
    public RestResponse<String> otherJson(JsonProcessingException e) {
        return invalidJson(e);
    }

    @ServerExceptionMapper
    public RestResponse<String> authenticationFailed(AuthenticationFailedException e) {
        return unauthorized("The bearer token is missing, expired or invalid");
    }

    @ServerExceptionMapper
    public RestResponse<String> notAuthenticated(UnauthorizedException e) {
        return unauthorized("The bearer token is missing, expired or invalid");
    }

    @ServerExceptionMapper
    public RestResponse<String> forbidden(ForbiddenException e) {
        LOG.debug("403 forbidden");
        return writer.response(Problem.of(ProblemType.FORBIDDEN, 403, "This operation needs a role the caller lacks"),
                Map.of());
    }

    @ServerExceptionMapper
    public RestResponse<String> web(WebApplicationException e) {
        if (e.getCause() instanceof JsonProcessingException json) {
            return invalidJson(json);
        }
        int status = e.getResponse() == null ? 500 : e.getResponse().getStatus();
        if (status >= 500) {
            LOG.errorf(e, "HTTP %d raised by the framework", status);
        } else {
            LOG.debugf("HTTP %d raised by the framework", status);
        }
        ProblemType type = ProblemType.forStatus(status);
        return writer.response(Problem.of(type, status, WebProblems.detailFor(status)), Map.of());
    }

    /** Never a 503: that would promise that nothing happened (API.md section 2). */
    @ServerExceptionMapper
    public RestResponse<String> outcomeUnknown(OutcomeUnknownException e) {
        LOG.warnf("500 outcome-unknown: %s", DatabaseErrors.describe(e));
        return writer.response(Problem.of(ProblemType.OUTCOME_UNKNOWN, 500,
                "The database did not confirm the commit: the request may or may not have taken effect. Send the same"
                        + " request again, with the same Idempotency-Key, to learn the outcome"),
                Map.of(HttpHeaders.RETRY_AFTER, "1"));
    }

    /** Nothing was sent to the database for it (API.md section 12): a 503 is true. */
    @ServerExceptionMapper
    public RestResponse<String> budgetSpent(BudgetSpentException e) {
        LOG.debugf("503 not started: %s", e.getMessage());
        return writer.response(Problem.of(ProblemType.TEMPORARILY_UNAVAILABLE, 503,
                "The request waited longer than its budget before its work could start. Nothing was done: retry it,"
                        + " with the same Idempotency-Key, after Retry-After"),
                Map.of(HttpHeaders.RETRY_AFTER, "1"));
    }

    @ServerExceptionMapper
    public RestResponse<String> tooManyRequests(TooManyRequestsException e) {
        LOG.debug("429 too-many-requests");
        return writer.response(Problem.of(ProblemType.TOO_MANY_REQUESTS, 429, e.getMessage()),
                Map.of(HttpHeaders.RETRY_AFTER, Long.toString(e.retryAfterSeconds())));
    }

    @ServerExceptionMapper
    public RestResponse<String> unexpected(Throwable e) {
        if (DatabaseErrors.isTransient(e)) {
            LOG.warnf("503 database unavailable: %s", DatabaseErrors.describe(e));
            return writer.response(
                    Problem.of(ProblemType.TEMPORARILY_UNAVAILABLE, 503,
                            "The database is unavailable or too slow right now; retrying with the same Idempotency-Key is safe"),
                    Map.of(HttpHeaders.RETRY_AFTER, "1"));
        }
        LOG.error("500 internal error", e);
        return writer.response(Problem.of(ProblemType.INTERNAL_ERROR, 500, "An unexpected error occurred"), Map.of());
    }

    private RestResponse<String> unauthorized(String detail) {
        LOG.debug("401 unauthorized");
        return writer.response(Problem.of(ProblemType.UNAUTHORIZED, 401, detail),
                Map.of(HttpHeaders.WWW_AUTHENTICATE, "Bearer"));
    }

    private RestResponse<String> invalidJson(JsonProcessingException e) {
        String detail;
        if (e instanceof JsonMappingException mapping && !mapping.getPath().isEmpty()) {
            String field = mapping.getPath().getLast().getFieldName();
            detail = (field == null ? "A value" : "Field '" + field + "'") + " has an invalid value"
                    + (WholeNumberDeserializer.isWholeNumberFailure(e) ? ": expected a whole number" : "");
        } else if (e.getOriginalMessage() != null && e.getOriginalMessage().startsWith("Duplicate field")) {
            detail = "The JSON body names a field twice";
        } else {
            detail = "The body is not valid JSON";
        }
        LOG.debugf("400 invalid-request: %s", detail);
        return writer.response(new Problem(ProblemType.INVALID_REQUEST.typeUri(), ProblemType.INVALID_REQUEST.title(), 400,
                detail, null), Map.of());
    }

    private static String fieldOf(Path path) {
        String field = null;
        for (Path.Node node : path) {
            if (node.getKind() == ElementKind.PROPERTY) {
                field = node.getName();
            }
        }
        return field == null ? "body" : field;
    }
}
