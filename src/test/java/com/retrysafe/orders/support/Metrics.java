package com.retrysafe.orders.support;

import static io.restassured.RestAssured.given;

/** Reads one series from the Prometheus scrape, as Prometheus would. */
public final class Metrics {

    private Metrics() {
    }

    public static double value(String series) {
        return value(scrape(), series);
    }

    /**
     * Asserts that one scrape of /q/metrics has each of these series (exact name and labels),
     * whatever their values: for series that must exist from start-up, before anything counts.
     */
    public static void assertSeries(String... series) {
        String scrape = scrape();
        for (String one : series) {
            value(scrape, one);
        }
    }

    private static String scrape() {
        return given().when().get("/q/metrics").then().statusCode(200).extract().asString();
    }

    private static double value(String scrape, String series) {
        for (String line : scrape.split("\n")) {
            if (line.startsWith(series + " ")) {
                // The value is the first field: OpenMetrics may follow it with an exemplar
                // ("# {trace_id=...} 1.0 <time>") once tracing is on.
                return Double.parseDouble(line.substring(series.length() + 1).trim().split("\\s+")[0]);
            }
        }
        throw new AssertionError("No series " + series + " in /q/metrics");
    }

    public static double requests(String outcome) {
        return value("idempotency_requests_total{operation=\"CREATE_ORDER\",outcome=\"" + outcome + "\"}");
    }
}
