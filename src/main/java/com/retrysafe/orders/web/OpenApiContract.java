package com.retrysafe.orders.web;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

import io.quarkus.smallrye.openapi.OpenApiFilter;

/**
 * Completes the OpenAPI document with the answers that every route of a kind shares, so that the
 * resources annotate only what is their own (their success, their 404, their 422). For every
 * {@code /api} operation: {@code 401}, {@code 429} and {@code 503}; for one that writes, {@code 500 outcome-unknown}; with a body, {@code 400 invalid-request},
 * {@code 413} and {@code 415}; with a group in its security requirement, {@code 403}; with the
 * {@code Idempotency-Key} parameter, the key's {@code 400}s and the two {@code 409}s. Every problem
 * answer becomes {@code application/problem+json} with the {@code Problem} schema, its
 * {@code type} narrowed to the slugs this answer can carry, also listed in {@code x-problem-types}.
 * A resource names its own problem answers' slugs the same way: {@code x-problem-types} on its
 * {@code @APIResponse}, separated by spaces. The slugs come from {@link ProblemType}, the one list.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class OpenApiContract implements OASFilter {

    public static final String PROBLEM_TYPES = "x-problem-types";
    public static final String IDEMPOTENCY_KEY = "#/components/parameters/IdempotencyKey";

    @Override
    public void filterOpenAPI(OpenAPI api) {
        Schema problem = api.getComponents().getSchemas().get("Problem");
        problem.getProperties().get("type").setEnumeration(
                Arrays.stream(ProblemType.values()).map(type -> (Object) type.typeUri()).toList());
        api.getPaths().getPathItems().forEach((path, item) -> {
            if (path.startsWith("/api/")) {
                item.getOperations().forEach((method, operation) -> completeProblems(operation,
                        method != PathItem.HttpMethod.GET && method != PathItem.HttpMethod.HEAD));
            }
        });
    }

    /** @param writes the operation commits a transaction, whose COMMIT may go unanswered */
    private static void completeProblems(Operation operation, boolean writes) {
        APIResponses responses = operation.getResponses();
        Map<String, Set<ProblemType>> problems = new TreeMap<>();
        responses.getAPIResponses().forEach((code, response) -> {
            Object declared = response.getExtensions() == null ? null : response.getExtensions().get(PROBLEM_TYPES);
            if (declared instanceof String slugs) {
                for (String slug : slugs.trim().split("\\s+")) {
                    add(problems, bySlug(slug));
                }
            }
        });
        add(problems, ProblemType.UNAUTHORIZED);
        add(problems, ProblemType.TEMPORARILY_UNAVAILABLE);
        // Every /api/ route is behind the door and counts against its owner's share (API.md section 12).
        add(problems, ProblemType.TOO_MANY_REQUESTS);
        if (needsGroup(operation)) {
            add(problems, ProblemType.FORBIDDEN);
        }
        if (operation.getRequestBody() != null) {
            add(problems, ProblemType.INVALID_REQUEST);
            add(problems, ProblemType.PAYLOAD_TOO_LARGE);
            add(problems, ProblemType.UNSUPPORTED_MEDIA_TYPE);
        }
        if (writes) {
            add(problems, ProblemType.OUTCOME_UNKNOWN);
        }
        if (isIdempotent(operation)) {
            add(problems, ProblemType.MISSING_IDEMPOTENCY_KEY);
            add(problems, ProblemType.INVALID_IDEMPOTENCY_KEY);
            add(problems, ProblemType.IDEMPOTENCY_KEY_REUSED);
            add(problems, ProblemType.REQUEST_IN_PROGRESS);
        }
        // The scanner's own guesses ("Not Allowed" on every authenticated route, "Bad Request" on
        // any input) go: an error answer is in the document only when it can happen.
        for (String code : new ArrayList<>(responses.getAPIResponses().keySet())) {
            if (code.charAt(0) >= '4' && !problems.containsKey(code)) {
                responses.removeAPIResponse(code);
            }
        }
        problems.forEach((code, types) -> responses.addAPIResponse(code,
                problemResponse(responses.getAPIResponse(code), types)));
        // In status order, successes first, as a reader looks for them.
        APIResponses sorted = OASFactory.createAPIResponses();
        new TreeMap<>(responses.getAPIResponses()).forEach(sorted::addAPIResponse);
        operation.setResponses(sorted);
    }

    private static APIResponse problemResponse(APIResponse declared, Set<ProblemType> types) {
        boolean fromResource = declared != null && declared.getExtensions() != null
                && declared.getExtensions().containsKey(PROBLEM_TYPES);
        APIResponse response = fromResource ? declared : OASFactory.createAPIResponse();
        String slugs = types.stream().map(type -> "`" + type.slug() + "`").collect(Collectors.joining(", "));
        String description = fromResource && declared.getDescription() != null ? declared.getDescription()
                : types.stream().map(OpenApiContract::meaning).distinct().collect(Collectors.joining(" "));
        response.setDescription(description + "\n\nProblem types: " + slugs + ".");
        response.addExtension(PROBLEM_TYPES, types.stream().map(ProblemType::slug).toList());
        Schema narrowed = OASFactory.createSchema()
                .addAllOf(OASFactory.createSchema().ref("Problem"))
                .addAllOf(OASFactory.createSchema().addProperty("type", OASFactory.createSchema()
                        .enumeration(types.stream().map(type -> (Object) type.typeUri()).toList())));
        response.setContent(OASFactory.createContent().addMediaType(Problem.MEDIA_TYPE,
                OASFactory.createMediaType().schema(narrowed)));
        if (types.contains(ProblemType.REQUEST_IN_PROGRESS) || types.contains(ProblemType.TEMPORARILY_UNAVAILABLE)
                || types.contains(ProblemType.OUTCOME_UNKNOWN) || types.contains(ProblemType.TOO_MANY_REQUESTS)) {
            response.addHeader("Retry-After", OASFactory.createHeader().ref("RetryAfter"));
        }
        return response;
    }

    /** What a shared problem means for the client; a resource describes its own. */
    private static String meaning(ProblemType type) {
        return switch (type) {
            case UNAUTHORIZED -> "The bearer token is missing, expired or invalid, or its `sub` is not a positive 64-bit integer.";
            case FORBIDDEN -> "The token's `groups` lack the group this route needs (the scope of its security requirement).";
            case INVALID_REQUEST -> "The body is not valid JSON, or a field is missing or out of range (`violations` lists them); nothing is recorded, the key stays free.";
            case MISSING_IDEMPOTENCY_KEY, INVALID_IDEMPOTENCY_KEY -> "The `Idempotency-Key` is missing or malformed (see the parameter); nothing is recorded.";
            case IDEMPOTENCY_KEY_REUSED -> "`idempotency-key-reused`: this key was used by this owner for a different request (another body or path). The status is `idempotency.mismatch-status`, 409 unless the operator chose 422 (as the IETF draft does).";
            case REQUEST_IN_PROGRESS -> "`request-in-progress`: the first request with this key is still running after waiting `idempotency.in-flight-wait` (2 s by default); retry with the same key after `Retry-After`.";
            case PAYLOAD_TOO_LARGE -> "The body is larger than the limit (64 KiB by default).";
            case UNSUPPORTED_MEDIA_TYPE -> "The body is not `application/json`.";
            case OUTCOME_UNKNOWN -> "`outcome-unknown`: the database did not confirm the COMMIT, so the request may or may not have taken effect. Send the same request again (with the same Idempotency-Key, where the route takes one) after `Retry-After` to learn the outcome.";
            case TEMPORARILY_UNAVAILABLE -> "The service is overloaded (shed at the door, before anything was done), the request's budget (`idempotency.request-budget`) was spent before its work could start, or the database is unavailable or too slow. Nothing is recorded either way (a transaction is known not to have committed), and a retry with the same key after `Retry-After` is safe. A shed answer's `Retry-After` is drawn at random and grows while the overload lasts.";
            case TOO_MANY_REQUESTS -> "`too-many-requests`: this owner already has as many requests in progress as it may (`overload.owner.max-in-flight`). Nothing was done: retry with the same key after `Retry-After`.";
            default -> type.title() + ".";
        };
    }

    private static void add(Map<String, Set<ProblemType>> problems, ProblemType type) {
        problems.computeIfAbsent(Integer.toString(type.status()), code -> new LinkedHashSet<>()).add(type);
    }

    private static ProblemType bySlug(String slug) {
        for (ProblemType type : ProblemType.values()) {
            if (type.slug().equals(slug)) {
                return type;
            }
        }
        throw new IllegalArgumentException("No problem type " + slug + " (web/ProblemType)");
    }

    private static boolean isIdempotent(Operation operation) {
        return operation.getParameters() != null
                && operation.getParameters().stream().anyMatch(parameter -> IDEMPOTENCY_KEY.equals(parameter.getRef()));
    }

    /** A role in the security requirement's scopes (OpenAPI 3.1: role names for non-OAuth schemes). */
    private static boolean needsGroup(Operation operation) {
        List<org.eclipse.microprofile.openapi.models.security.SecurityRequirement> security = operation.getSecurity();
        return security != null && security.stream()
                .anyMatch(requirement -> requirement.getSchemes().values().stream().anyMatch(scopes -> !scopes.isEmpty()));
    }
}
