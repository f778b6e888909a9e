package com.retrysafe.orders.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * The three shipped gateway configurations (deploy/gateway/) agree with the service: each waits
 * for an answer longer than the service takes to give one (idempotency.request-budget + 1 s, API.md
 * section 12), so none cuts an answer or sends a retry while the first copy may still run; each
 * passes on /api/ and /q/openapi and nothing else; none retries the service's 5xx answers. The
 * nginx file is also run by GatewayRoutesIT and RollingUpdateIT; the ingress-nginx and Istio files
 * are read here only (no cluster in the build).
 */
class GatewayFilesTest {

    /** idempotency.request-budget's default, read from overload/RequestBudgetConfig. */
    private static final Duration REQUEST_BUDGET = budgetDefault();
    /** Every answer comes within the budget plus this of the request's arrival (API.md section 12). */
    private static final Duration ANSWER_BOUND = REQUEST_BUDGET.plusSeconds(1);
    private static final Path GATEWAY = Path.of("deploy", "gateway");
    private static final ObjectReader YAML = new ObjectMapper(new YAMLFactory()).readerFor(JsonNode.class);

    @Test
    void nginxWaitsLongerThanTheServiceAnswersAndNeverRetriesItsAnswers() throws IOException {
        String conf = Files.readString(GATEWAY.resolve("nginx.conf"));
        Duration read = Duration.ofSeconds(Long.parseLong(single(conf, "proxy_read_timeout\\s+(\\d+)s;")));
        assertTrue(read.compareTo(ANSWER_BOUND) > 0, "proxy_read_timeout " + read + " must exceed " + ANSWER_BOUND);
        String retryOn = single(conf, "proxy_next_upstream\\s+([^;]+);");
        assertFalse(retryOn.contains("http_"), "no answer of the service is retried: " + retryOn);
        assertEquals(Set.of("/api/", "= /q/openapi", "/"), locations(conf));
        assertTrue(conf.matches("(?s).*location / \\{\\s*return 404;\\s*}.*"), "everything else is a 404");
    }

    @Test
    void ingressNginxWaitsLongerThanTheServiceAnswersAndRoutesOnlyTheApiAndTheOpenApiDocument()
            throws IOException {
        JsonNode ingress = documents("ingress-nginx.yaml").get(0);
        JsonNode annotations = ingress.path("metadata").path("annotations");
        Duration read = Duration.ofSeconds(annotations.path("nginx.ingress.kubernetes.io/proxy-read-timeout").asLong());
        assertTrue(read.compareTo(ANSWER_BOUND) > 0, "proxy-read-timeout " + read + " must exceed " + ANSWER_BOUND);
        String retryOn = annotations.path("nginx.ingress.kubernetes.io/proxy-next-upstream").asText();
        assertFalse(retryOn.isEmpty() || retryOn.contains("http_"), "no answer of the service is retried: " + retryOn);
        assertTrue(annotations.path("nginx.ingress.kubernetes.io/custom-http-errors").isMissingNode(),
                "the service's 5xx problems pass as they are");

        Set<String> paths = new HashSet<>();
        for (JsonNode rule : ingress.path("spec").path("rules")) {
            for (JsonNode path : rule.path("http").path("paths")) {
                paths.add(path.path("path").asText() + " " + path.path("pathType").asText());
            }
        }
        assertEquals(Set.of("/api/ Prefix", "/q/openapi Exact"), paths);
    }

    @Test
    void istioWaitsLongerThanTheServiceAnswersPerTryAndRoutesOnlyTheApiAndTheOpenApiDocument() throws IOException {
        JsonNode virtualService = documents("istio.yaml").stream()
                .filter(document -> "VirtualService".equals(document.path("kind").asText())).findFirst().orElseThrow();
        Set<String> matches = new HashSet<>();
        for (JsonNode route : virtualService.path("spec").path("http")) {
            for (JsonNode match : route.path("match")) {
                match.path("uri").fields().forEachRemaining(field -> matches.add(field.getKey() + " " + field.getValue().asText()));
            }
            JsonNode retries = route.path("retries");
            Duration perTry = seconds(retries.path("perTryTimeout").asText());
            assertTrue(perTry.compareTo(ANSWER_BOUND) > 0, "perTryTimeout " + perTry + " must exceed " + ANSWER_BOUND);
            Duration whole = seconds(route.path("timeout").asText());
            assertTrue(whole.compareTo(perTry) >= 0, "the route's timeout " + whole + " leaves a whole try");
            String retryOn = retries.path("retryOn").asText();
            for (String policy : List.of("5xx", "gateway-error", "retriable-status-codes")) {
                assertFalse(retryOn.contains(policy), "no answer of the service is retried: " + retryOn);
            }
        }
        assertEquals(Set.of("prefix /api/", "exact /q/openapi"), matches);
    }

    private static List<JsonNode> documents(String file) throws IOException {
        List<JsonNode> documents = new ArrayList<>();
        try (var all = YAML.<JsonNode>readValues(Files.readString(GATEWAY.resolve(file)))) {
            all.forEachRemaining(documents::add);
        }
        return documents;
    }

    private static Set<String> locations(String conf) {
        Set<String> locations = new HashSet<>();
        Matcher matcher = Pattern.compile("(?m)^\\s*location\\s+([^{]+?)\\s*\\{").matcher(conf);
        while (matcher.find()) {
            locations.add(matcher.group(1));
        }
        return locations;
    }

    private static String single(String text, String regex) {
        Matcher matcher = Pattern.compile("(?m)^\\s*" + regex).matcher(text);
        assertTrue(matcher.find(), "no " + regex);
        String value = matcher.group(1).trim();
        assertFalse(matcher.find(), "more than one " + regex);
        return value;
    }

    private static Duration seconds(String value) {
        assertTrue(value.matches("\\d+s"), "a duration in seconds: " + value);
        return Duration.ofSeconds(Long.parseLong(value.substring(0, value.length() - 1)));
    }

    private static Duration budgetDefault() {
        try {
            return Duration.parse("PT" + com.retrysafe.orders.overload.RequestBudgetConfig.class
                    .getMethod("requestBudget").getAnnotation(io.smallrye.config.WithDefault.class).value()
                    .toUpperCase(java.util.Locale.ROOT));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
    }
}
