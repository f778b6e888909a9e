package com.retrysafe.orders.idempotency.rest;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;

import org.jboss.resteasy.reactive.RestQuery;

import com.retrysafe.orders.idempotency.Operation;
import com.retrysafe.orders.idempotency.audit.KeyHistory;
import com.retrysafe.orders.idempotency.audit.KeyHistoryService;
import com.retrysafe.orders.web.AuthenticatedOwner;
import com.retrysafe.orders.web.Problem;
import com.retrysafe.orders.web.ProblemException;

import io.smallrye.mutiny.Uni;

/**
 * What support sees of a key (API.md section 10): for tokens in the {@code support} group only.
 * An unknown owner or key is an empty answer, not 404: "never used" and "long forgotten" look the
 * same to the caller, which is the truth.
 */
@Path("/api/admin/idempotency-records")
@Produces(MediaType.APPLICATION_JSON)
public class IdempotencyRecordsResource {

    /** The Idempotency-Key alphabet: a key outside it was never stored. */
    private static final Pattern KEY = Pattern.compile("[A-Za-z0-9_-]{16,128}");
    private static final Pattern POSITIVE_LONG = Pattern.compile("[1-9][0-9]{0,18}");

    private final KeyHistoryService history;
    private final AuthenticatedOwner caller;

    public IdempotencyRecordsResource(KeyHistoryService history, AuthenticatedOwner caller) {
        this.history = history;
        this.caller = caller;
    }

    @GET
    @RolesAllowed("support")
    @org.eclipse.microprofile.openapi.annotations.Operation(summary = "What happened to a key: the live record and the audit history (support only)",
            description = "`live` is the record still remembered, or `null`; `history` holds the records the "
                    + "cleanup removed after `idempotency.retention` (kept `idempotency.audit-retention`, 30 d by "
                    + "default), newest first. No response body, token or request body is ever shown. An unknown "
                    + "owner or key gives empty results, not 404.")
    @APIResponse(responseCode = "200", description = "The key's live record and history.",
            content = @Content(mediaType = MediaType.APPLICATION_JSON, schema = @Schema(implementation = KeyHistory.class)))
    @APIResponse(responseCode = "400", description = "`ownerId`, `key` or `operation` is missing or malformed.",
            extensions = @Extension(name = "x-problem-types", value = "invalid-request"))
    public Uni<KeyHistory> find(@RestQuery String ownerId, @RestQuery String key, @RestQuery String operation) {
        caller.id();
        List<Problem.Violation> violations = new ArrayList<>();
        long owner = ownerId(ownerId, violations);
        if (key == null || !KEY.matcher(key).matches()) {
            violations.add(new Problem.Violation("key", "must be 16 to 128 characters of A-Z, a-z, 0-9, '_' or '-'"));
        }
        Operation op = operation(operation, violations);
        if (!violations.isEmpty()) {
            throw ProblemException.invalidRequest(violations);
        }
        return history.find(owner, key, op);
    }

    private static long ownerId(String text, List<Problem.Violation> violations) {
        if (text != null && POSITIVE_LONG.matcher(text).matches()) {
            try {
                return Long.parseLong(text);
            } catch (NumberFormatException overflow) {
                // reported below
            }
        }
        violations.add(new Problem.Violation("ownerId", "must be a whole number from 1 to " + Long.MAX_VALUE));
        return 0;
    }

    private static Operation operation(String text, List<Problem.Violation> violations) {
        if (text == null) {
            return null;
        }
        for (Operation candidate : Operation.values()) {
            if (candidate.name().equals(text)) {
                return candidate;
            }
        }
        violations.add(new Problem.Violation("operation", "must be one of " + List.of(Operation.values())));
        return null;
    }
}
