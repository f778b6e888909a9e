package com.retrysafe.orders.web;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.test.junit.QuarkusTest;

/**
 * The OpenAPI document at {@code /q/openapi} against API.md: every route with its answers, and
 * what the contract promises beyond Java signatures (the Idempotency-Key, the replay headers, the
 * problem types, the bearer JWT and the groups, the retention). HTTP only, so
 * {@code OpenApiContractIT} reruns it on the packaged jar (prod profile).
 */
@QuarkusTest
class OpenApiContractTest {

    private static final String ANY_CALLER = null;
    private static final boolean KEY = true;
    private static final boolean NO_KEY = false;

    /**
     * API.md, route by route: the group the route needs (null: any authenticated caller), whether
     * it takes an Idempotency-Key, and each answer: a status alone for a success, a status and its
     * problem slugs for an error. The document must have exactly these. A new route goes here.
     */
    private static final List<Route> API = List.of(
            route("POST", "/api/orders", ANY_CALLER, KEY,
                    "201",
                    "400 invalid-request missing-idempotency-key invalid-idempotency-key",
                    "401 unauthorized",
                    "409 idempotency-key-reused request-in-progress",
                    "413 payload-too-large",
                    "415 unsupported-media-type",
                    "422 unknown-sku insufficient-stock",
                    "500 outcome-unknown",
                    "429 too-many-requests", "503 temporarily-unavailable"),
            route("GET", "/api/orders/{orderId}", ANY_CALLER, NO_KEY,
                    "200", "401 unauthorized", "404 not-found", "429 too-many-requests", "503 temporarily-unavailable"),
            route("GET", "/api/orders", ANY_CALLER, NO_KEY,
                    "200", "400 invalid-request", "401 unauthorized", "429 too-many-requests", "503 temporarily-unavailable"),
            route("PUT", "/api/inventory/{skuId}", "inventory-admin", NO_KEY,
                    "200",
                    "400 invalid-request",
                    "401 unauthorized",
                    "403 forbidden",
                    "413 payload-too-large",
                    "415 unsupported-media-type",
                    "500 outcome-unknown",
                    "429 too-many-requests", "503 temporarily-unavailable"),
            route("GET", "/api/inventory/{skuId}", ANY_CALLER, NO_KEY,
                    "200", "401 unauthorized", "404 not-found", "429 too-many-requests", "503 temporarily-unavailable"),
            route("POST", "/api/orders/{orderId}/payments", ANY_CALLER, KEY,
                    "201",
                    "202",
                    "400 invalid-request missing-idempotency-key invalid-idempotency-key",
                    "401 unauthorized",
                    "404 not-found",
                    "409 idempotency-key-reused request-in-progress order-already-paid",
                    "413 payload-too-large",
                    "415 unsupported-media-type",
                    "422 payment-declined",
                    "500 outcome-unknown",
                    "502 payment-failed",
                    "429 too-many-requests", "503 temporarily-unavailable"),
            route("GET", "/api/payments/{paymentId}", ANY_CALLER, NO_KEY,
                    "200", "401 unauthorized", "404 not-found", "429 too-many-requests", "503 temporarily-unavailable"),
            route("GET", "/api/admin/idempotency-records", "support", NO_KEY,
                    "200", "400 invalid-request", "401 unauthorized", "403 forbidden", "429 too-many-requests", "503 temporarily-unavailable"));

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void everyRouteOfTheContractIsDescribedWithExactlyItsAnswers() {
        JsonNode document = document();
        Set<String> described = new TreeSet<>();
        document.get("paths").fields().forEachRemaining(path -> path.getValue().fieldNames()
                .forEachRemaining(method -> described.add(method.toUpperCase() + " " + path.getKey())));
        Set<String> expected = new TreeSet<>();
        for (Route route : API) {
            expected.add(route.method() + " " + route.path());
            JsonNode operation = document.path("paths").path(route.path()).path(route.method().toLowerCase());
            assertFalse(operation.isMissingNode(), route + " is missing from /q/openapi");
            checkAnswers(route, operation.get("responses"));
            checkSecurity(route, operation.get("security"));
            checkKey(route, operation.path("parameters"));
        }
        described.removeIf(route -> !route.contains(" /api/"));
        assertEquals(expected, described, "the /api routes of the document are those of API.md (this table)");
    }

    /** The bodies are checked in the resource methods (BodyValidation), with no @NotNull on the parameters. */
    @Test
    void everyRequestBodyIsRequiredWithItsSchema() {
        JsonNode paths = document().path("paths");
        for (String[] route : new String[][] { { "/api/orders", "post", "CreateOrderRequest" },
                { "/api/inventory/{skuId}", "put", "SetStockRequest" },
                { "/api/orders/{orderId}/payments", "post", "PayOrderRequest" } }) {
            JsonNode body = paths.path(route[0]).path(route[1]).path("requestBody");
            assertTrue(body.path("required").asBoolean(), route[1] + " " + route[0] + ": the body is required: " + body);
            assertEquals("#/components/schemas/" + route[2], body.at("/content/application~1json/schema/$ref").asText(),
                    route[1] + " " + route[0] + ": " + body);
        }
    }

    @Test
    void theIdempotencyKeyIsARequiredHeaderInBothFormsWithItsScope() {
        JsonNode key = document().at("/components/parameters/IdempotencyKey");
        assertEquals("Idempotency-Key", key.path("name").asText());
        assertEquals("header", key.path("in").asText());
        assertTrue(key.path("required").asBoolean(), "required");
        String description = key.path("description").asText();
        for (String promise : new String[] { "RFC 8941", "`K` and `\"K\"` name the same key", "Scope",
                "invalid-idempotency-key", "missing-idempotency-key", "idempotency.retention" }) {
            assertTrue(description.contains(promise), "the key's description says " + promise + ": " + description);
        }
        Pattern format = Pattern.compile(key.at("/schema/pattern").asText());
        for (String good : new String[] { "01JZ6Q4X7M9K8P2A6T3B5C1D0E", "\"8e03978e-40d5-43e8-bc93-6894a57f9324\"" }) {
            assertTrue(format.matcher(good).find(), "the format admits " + good);
        }
        for (String bad : new String[] { "short", "\"01JZ6Q4X7M9K8P2A6T3B5C1D0E", "\"01JZ6Q4X7M9K8P2A6T3B5C1D0E\";v=1",
                "\"\"", "\"01JZ6Q4X7M9K8P2A6\\\"T3B5C1D0E\"" }) {
            assertFalse(format.matcher(bad).find(), "the format refuses " + bad);
        }
        assertEquals(2, key.path("examples").size(), "an example of each form");
    }

    @Test
    void theDescriptionsStateTheRetentionAndTheReplayRules() {
        String description = document().at("/info/description").asText();
        for (String promise : new String[] { "idempotency.retention", "24 hours", "Idempotent-Replayed: true",
                "same bytes", "(owner, operation, key)", "idempotency-key-reused", "request-in-progress",
                "Retry-After" }) {
            assertTrue(description.contains(promise), "info.description says " + promise);
        }
    }

    @Test
    void problemsHaveOneSchemaWithTheListOfSlugsAndTheJwtSchemeIsBearer() {
        JsonNode document = document();
        JsonNode problem = document.at("/components/schemas/Problem");
        Set<String> required = new HashSet<>();
        problem.path("required").forEach(field -> required.add(field.asText()));
        assertEquals(Set.of("type", "title", "status", "detail"), required);
        Set<String> types = new HashSet<>();
        problem.at("/properties/type/enum").forEach(type -> types.add(type.asText()));
        Set<Integer> statuses = new TreeSet<>();
        for (Route route : API) {
            route.answers().forEach((status, slugs) -> {
                slugs.forEach(slug -> assertTrue(types.contains("/problems/" + slug), "Problem.type lists " + slug));
                if (!slugs.isEmpty()) {
                    statuses.add(status);
                }
            });
        }
        assertEquals(new TreeSet<>(List.of(400, 401, 403, 404, 409, 413, 415, 422, 429, 500, 502, 503)), statuses,
                "every problem answer of API.md is somewhere in the table");

        JsonNode scheme = document.at("/components/securitySchemes/bearerJwt");
        assertEquals("http", scheme.path("type").asText());
        assertEquals("bearer", scheme.path("scheme").asText());
        assertEquals("JWT", scheme.path("bearerFormat").asText());
    }

    @Test
    void theDocumentIsServedAsYamlAndJsonAndSwaggerUiOnlyInDev() {
        given().when().get("/q/openapi").then().statusCode(200)
                .body(org.hamcrest.Matchers.startsWith("---"));
        given().accept("application/json").when().get("/q/openapi").then().statusCode(200)
                .contentType("application/json");
        given().when().get("/q/swagger-ui/").then().statusCode(404);
    }

    private static void checkAnswers(Route route, JsonNode responses) {
        Set<Integer> described = new TreeSet<>();
        responses.fieldNames().forEachRemaining(code -> described.add(Integer.parseInt(code)));
        assertEquals(route.answers().keySet(), described, route + ": its answers");
        route.answers().forEach((status, slugs) -> {
            JsonNode answer = responses.get(Integer.toString(status));
            String where = route + " " + status;
            if (slugs.isEmpty()) {
                assertNotNull(answer.at("/content/application~1json/schema").get("$ref"), where + ": a JSON body");
                if (route.idempotent()) {
                    assertTrue(answer.at("/headers/Location").has("$ref"), where + ": Location");
                    assertTrue(answer.at("/headers/Idempotent-Replayed").has("$ref"), where + ": Idempotent-Replayed");
                }
                return;
            }
            JsonNode schema = answer.at("/content/application~1problem+json/schema");
            assertFalse(schema.isMissingNode(), where + ": application/problem+json");
            assertEquals("#/components/schemas/Problem", schema.at("/allOf/0/$ref").asText(), where + ": Problem");
            List<String> documented = new ArrayList<>();
            answer.path("x-problem-types").forEach(slug -> documented.add(slug.asText()));
            assertEquals(new TreeSet<>(slugs), new TreeSet<>(documented), where + ": its problem types");
            if (slugs.contains("request-in-progress") || slugs.contains("temporarily-unavailable")
                    || slugs.contains("outcome-unknown")) {
                assertTrue(answer.at("/headers/Retry-After").has("$ref"), where + ": Retry-After");
            }
            if (route.idempotent() && (status == 422 || status == 502)) {
                assertTrue(answer.at("/headers/Idempotent-Replayed").has("$ref"), where + ": recorded, replayed");
            }
        });
    }

    private static void checkSecurity(Route route, JsonNode security) {
        assertNotNull(security, route + ": a bearer token");
        List<String> groups = new ArrayList<>();
        security.path(0).path("bearerJwt").forEach(group -> groups.add(group.asText()));
        assertTrue(security.path(0).has("bearerJwt"), route + ": the bearer JWT scheme");
        assertEquals(route.group() == null ? List.of() : List.of(route.group()), groups, route + ": the group it needs");
    }

    private static void checkKey(Route route, JsonNode parameters) {
        boolean hasKey = false;
        for (JsonNode parameter : parameters) {
            hasKey |= "#/components/parameters/IdempotencyKey".equals(parameter.path("$ref").asText());
        }
        assertEquals(route.idempotent(), hasKey, route + ": the Idempotency-Key parameter");
    }

    private static JsonNode document() {
        String text = given().accept("application/json").when().get("/q/openapi?format=json")
                .then().statusCode(200).extract().asString();
        try {
            return JSON.readTree(text);
        } catch (Exception e) {
            throw new AssertionError("/q/openapi is not JSON", e);
        }
    }

    private static Route route(String method, String path, String group, boolean idempotent, String... answers) {
        Map<Integer, List<String>> byStatus = new LinkedHashMap<>();
        for (String answer : answers) {
            String[] words = answer.split(" ");
            byStatus.put(Integer.parseInt(words[0]), List.of(Arrays.copyOfRange(words, 1, words.length)));
        }
        return new Route(method, path, group, idempotent, byStatus);
    }

    private record Route(String method, String path, String group, boolean idempotent,
            Map<Integer, List<String>> answers) {
        @Override
        public String toString() {
            return method + " " + path;
        }
    }
}
