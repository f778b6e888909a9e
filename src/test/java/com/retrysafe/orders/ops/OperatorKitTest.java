package com.retrysafe.orders.ops;

import static com.retrysafe.orders.support.Api.createOrder;
import static com.retrysafe.orders.support.Api.orderBody;
import static com.retrysafe.orders.support.Api.skuWithStock;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.retrysafe.orders.ops.PromQl.LabelMatcher;
import com.retrysafe.orders.ops.PromQl.Selector;
import com.retrysafe.orders.support.TestIds;

import io.quarkus.test.junit.QuarkusTest;

/**
 * deploy/: the Grafana dashboard and the Prometheus rules parse, have the shape their tools need,
 * and use only metrics and labels that this service really exports, checked against a live scrape.
 */
@QuarkusTest
class OperatorKitTest {

    private static final Path DASHBOARD = Path.of("deploy/grafana/order-service.json");
    private static final Path ALERTS = Path.of("deploy/prometheus/alerts.yml");
    private static final Path RUNBOOK = Path.of("deploy/README.md");

    private static final Set<String> REQUIRED_ALERTS = Set.of(
            "OrderServiceIdempotencyKeyReuse", "OrderServiceRequestsInProgress", "OrderServiceCleanupStalled",
            "OrderServiceCleanupFailing",
            "OrderServiceReadinessFlapping", "OrderServiceServerErrors", "OrderServiceUnavailable",
            "OrderServiceDbPoolSaturated", "OrderServiceDbPoolWaiting", "OrderServiceRedisBreakerOpen",
            "OrderServiceRedisErrors", "OrderServiceTargetDown", "OrderServiceAbsent", "OrderServicePaymentsStuck",
            "OrderServiceOutboxStuck", "OrderServicePaymentResultConflicting",
            "OrderServiceShedding", "OrderServiceRequestBudgetSpent", "OrderServiceConnectionChurn");

    /** One signal per dashboard row the issue asks for; the scrape test checks the names exist. */
    private static final Set<String> REQUIRED_DASHBOARD_METRICS = Set.of(
            "idempotency_requests_total", "http_server_requests_seconds_bucket", "http_server_requests_seconds_count",
            "sql_pool_ratio", "sql_pool_queue_size", "idempotency_cleanup_deleted_total",
            "idempotency_cache_requests_total", "up", "kube_pod_status_ready",
            "payments_tasks", "payments_oldest_unfinished_age_seconds", "payments_attempts_total",
            "payments_lease_takeovers_total", "payments_fenced_writes_total",
            "payments_provider_latency_seconds_count", "outbox_events_published_total",
            "outbox_oldest_unpublished_age_seconds", "inbox_messages_total",
            "http_admission_shed_total", "http_admission_owner_limited_total", "http_admission_limit",
            "http_admission_in_flight", "request_budget_spent_total", "request_wait_seconds_bucket",
            "db_connections_opened_total", "db_connections_closed_total");

    /** Labels Prometheus attaches to every scraped series; the service never exports them. */
    private static final Set<String> TARGET_LABELS = Set.of("job", "instance");

    /**
     * Labels whose values appear only after such a request was served (a 503 needs a database
     * outage): for them only the label itself must exist.
     */
    private static final Set<String> TRAFFIC_DEPENDENT_LABELS = Set.of("status");

    private static final Pattern LABEL_VALUES = Pattern.compile("^\\s*label_values\\((.*),\\s*\\w+\\s*\\)\\s*$",
            Pattern.DOTALL);
    private static final Pattern SIMPLE_ALTERNATION = Pattern.compile("[\\w/{}.-]+(\\|[\\w/{}.-]+)*");
    private static final Pattern DURATION = Pattern.compile("\\d+[smhd]");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void theDashboardIsAGrafanaDashboardOnAPrometheusVariable() throws IOException {
        JsonNode dashboard = JSON.readTree(DASHBOARD.toFile());

        assertTrue(dashboard.path("schemaVersion").asInt() >= 36, "schemaVersion >= 36");
        assertFalse(dashboard.path("title").asText().isBlank(), "title");
        JsonNode datasourceVariable = variable(dashboard, "datasource");
        assertNotNull(datasourceVariable, "a datasource variable, so the dashboard imports into any Grafana");
        assertEquals("datasource", datasourceVariable.path("type").asText());
        assertEquals("prometheus", datasourceVariable.path("query").asText());

        Set<Integer> ids = new HashSet<>();
        List<String> expressions = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            String title = panel.path("title").asText();
            assertTrue(ids.add(panel.path("id").asInt()), "panel id repeated: " + title);
            JsonNode grid = panel.path("gridPos");
            assertTrue(grid.path("w").asInt() > 0 && grid.path("h").asInt() > 0, "gridPos of " + title);
            assertTrue(grid.path("x").asInt() + grid.path("w").asInt() <= 24, "panel wider than the grid: " + title);
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            assertEquals("${datasource}", panel.path("datasource").path("uid").asText(), "datasource of " + title);
            assertFalse(panel.path("targets").isEmpty(), "no query in " + title);
            for (JsonNode target : panel.path("targets")) {
                assertEquals("${datasource}", target.path("datasource").path("uid").asText(), "target of " + title);
                assertFalse(target.path("refId").asText().isBlank(), "refId in " + title);
                assertFalse(target.path("expr").asText().isBlank(), "expr in " + title);
                expressions.add(target.path("expr").asText());
            }
        }

        Set<String> used = new HashSet<>();
        expressions.forEach(expr -> PromQl.selectors(expr).forEach(s -> used.add(s.metric())));
        for (String metric : REQUIRED_DASHBOARD_METRICS) {
            assertTrue(used.contains(metric), "no panel shows " + metric);
        }
        String all = String.join("\n", expressions);
        assertTrue(all.contains("histogram_quantile(0.5,") && all.contains("histogram_quantile(0.99,"),
                "p50 and p99 from the histogram buckets");
        for (String outcome : List.of("replayed", "conflict", "in_progress")) {
            assertTrue(all.contains(outcome), "no panel singles out " + outcome);
        }
    }

    @Test
    void everyAlertIsCompleteAndHasARunbookSection() throws IOException {
        JsonNode rules = YAML.readTree(ALERTS.toFile());
        String runbook = Files.readString(RUNBOOK);

        Set<String> names = new HashSet<>();
        assertFalse(rules.path("groups").isEmpty(), "groups");
        for (JsonNode group : rules.path("groups")) {
            assertFalse(group.path("name").asText().isBlank(), "group name");
            assertFalse(group.path("rules").isEmpty(), "rules of " + group.path("name").asText());
            for (JsonNode rule : group.path("rules")) {
                String name = rule.path("alert").asText();
                assertFalse(name.isBlank(), "a rule without an alert name in " + group.path("name").asText());
                assertTrue(names.add(name), "alert repeated: " + name);
                assertFalse(rule.path("expr").asText().isBlank(), "expr of " + name);
                assertTrue(DURATION.matcher(rule.path("for").asText()).matches(), "for of " + name);
                assertTrue(Set.of("warning", "critical").contains(rule.path("labels").path("severity").asText()),
                        "severity of " + name);
                assertFalse(rule.path("annotations").path("summary").asText().isBlank(), "summary of " + name);
                assertFalse(rule.path("annotations").path("description").asText().isBlank(),
                        "description of " + name);
                assertEquals("deploy/README.md#" + name.toLowerCase(), rule.path("annotations").path("runbook").asText(),
                        "runbook of " + name);
                assertTrue(runbook.contains("\n### " + name + "\n"), "deploy/README.md has no section for " + name);
            }
        }
        for (String required : REQUIRED_ALERTS) {
            assertTrue(names.contains(required), "missing alert " + required);
        }
    }

    @Test
    void everyMetricAndLabelUsedIsExportedByTheService() throws IOException {
        // Series of the HTTP histogram appear with the first request of their kind.
        long owner = TestIds.owner();
        String key = TestIds.key();
        long sku = skuWithStock(5);
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        createOrder(owner, key, orderBody(sku, 1)).then().statusCode(201);
        Map<String, List<Map<String, String>>> scrape = scrape();

        Map<String, List<Selector>> used = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        JsonNode dashboard = JSON.readTree(DASHBOARD.toFile());
        for (JsonNode panel : dashboard.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                used.put("panel '" + panel.path("title").asText() + "' " + target.path("refId").asText(),
                        PromQl.selectors(target.path("expr").asText()));
            }
        }
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (variable.path("type").asText().equals("query")) {
                Matcher labelValues = LABEL_VALUES.matcher(variable.path("query").path("query").asText());
                assertTrue(labelValues.matches(), "variable " + variable.path("name").asText());
                used.put("variable " + variable.path("name").asText(), PromQl.selectors(labelValues.group(1)));
            }
        }
        JsonNode rules = YAML.readTree(ALERTS.toFile());
        for (JsonNode group : rules.path("groups")) {
            for (JsonNode rule : group.path("rules")) {
                List<Selector> selectors = PromQl.selectors(rule.path("expr").asText());
                used.put("alert " + rule.path("alert").asText(), selectors);
                for (Selector selector : selectors) {
                    // Other Quarkus services export http_server_* and sql_pool_* too.
                    LabelMatcher job = selector.matcher("job");
                    boolean ours = job != null && job.op().equals("=") && job.value().equals("order-service");
                    if (!selector.metric().startsWith("kube_") && !ours) {
                        problems.add("alert " + rule.path("alert").asText() + ": " + selector.metric()
                                + " without job=\"order-service\"");
                    }
                }
            }
        }

        int checked = 0;
        for (Map.Entry<String, List<Selector>> use : used.entrySet()) {
            assertFalse(use.getValue().isEmpty(), use.getKey() + " selects no metric");
            for (Selector selector : use.getValue()) {
                if (isExternal(selector.metric())) {
                    continue;
                }
                checked++;
                List<Map<String, String>> series = scrape.get(selector.metric());
                if (series == null) {
                    problems.add(use.getKey() + ": " + selector.metric() + " is not in /q/metrics");
                    continue;
                }
                for (LabelMatcher matcher : selector.matchers()) {
                    problems.addAll(check(use.getKey(), selector.metric(), matcher, series));
                }
            }
        }
        assertTrue(checked > 20, "the selectors were not found: only " + checked + " checked");
        if (!problems.isEmpty()) {
            fail("deploy/ uses series the service does not export, or other services' series:\n  "
                    + String.join("\n  ", problems));
        }
    }

    @Test
    void theSelectorListFindsMetricsAndLabelsAndNothingElse() {
        List<Selector> selectors = PromQl.selectors("""
                histogram_quantile(0.99, sum by (le) (rate(a_bucket{job=~"$job",uri="/x{y}"}[$__rate_interval])))
                  / ignoring (outcome) group_left sum(rate(b_total[5m] offset 1d)) > 0.5
                and absent(up{job="order-service"} == 1) or label_replace(c, "dst", "$1", "src", "(.*)")
                """);
        assertEquals(List.of("a_bucket", "b_total", "up", "c"), selectors.stream().map(Selector::metric).toList());
        assertEquals(List.of(new LabelMatcher("job", "=~", "$job"), new LabelMatcher("uri", "=", "/x{y}")),
                selectors.get(0).matchers());
        assertEquals(List.of(), selectors.get(1).matchers());
    }

    private static List<String> check(String where, String metric, LabelMatcher matcher,
            List<Map<String, String>> series) {
        String label = matcher.label();
        if (TARGET_LABELS.contains(label) || matcher.value().contains("$")) {
            return List.of();
        }
        if (series.stream().noneMatch(s -> s.containsKey(label))) {
            return List.of(where + ": " + metric + " has no label " + label);
        }
        if (TRAFFIC_DEPENDENT_LABELS.contains(label)) {
            return List.of();
        }
        List<String> values = switch (matcher.op()) {
            case "=" -> List.of(matcher.value());
            case "=~" -> SIMPLE_ALTERNATION.matcher(matcher.value()).matches()
                    ? List.of(matcher.value().split("\\|"))
                    : List.of();
            default -> List.of();
        };
        List<String> missing = new ArrayList<>();
        for (String value : values) {
            if (series.stream().noneMatch(s -> value.equals(s.get(label)))) {
                missing.add(where + ": " + metric + " has no series with " + label + "=\"" + value + "\"");
            }
        }
        return missing;
    }

    /** Series that come from Prometheus itself (up) or from kube-state-metrics, never from the service. */
    private static boolean isExternal(String metric) {
        return metric.equals("up") || metric.startsWith("kube_");
    }

    private static JsonNode variable(JsonNode dashboard, String name) {
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (variable.path("name").asText().equals(name)) {
                return variable;
            }
        }
        return null;
    }

    /** Sample name (with its _bucket, _count, _sum or _total suffix) to the label sets of its series. */
    private static Map<String, List<Map<String, String>>> scrape() {
        String text = given().when().get("/q/metrics").then().statusCode(200).extract().asString();
        Pattern sample = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})?\\s+\\S+.*$");
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
        Map<String, List<Map<String, String>>> series = new HashMap<>();
        for (String line : text.split("\n")) {
            Matcher m = sample.matcher(line);
            if (line.startsWith("#") || !m.matches()) {
                continue;
            }
            Map<String, String> labels = new HashMap<>();
            if (m.group(3) != null) {
                Matcher l = label.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            series.computeIfAbsent(m.group(1), name -> new ArrayList<>()).add(labels);
        }
        assertFalse(series.isEmpty(), "/q/metrics is empty");
        return series;
    }
}
