package com.retrysafe.orders.db;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

import org.eclipse.microprofile.config.spi.ConfigSource;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;

/**
 * Fills in what an operator should not have to repeat, at a low ordinal so that anything set
 * explicitly wins:
 * <ul>
 * <li>the JDBC URL that Flyway needs, derived from the reactive URL: without it Flyway skips the
 * migrations without a word, and the service would run on a schema that is not there; and the
 * other way round, the reactive URL when only the JDBC URL is given;</li>
 * <li>in dev and test, when no database is configured at all, a real PostgreSQL started from a
 * Maven artifact ({@code TEST_PG_URL} picks an existing server for tests instead).</li>
 * </ul>
 */
public class DatasourceDefaultsConfigSourceFactory implements ConfigSourceFactory {

    static final String REACTIVE_URL = "quarkus.datasource.reactive.url";
    static final String JDBC_URL = "quarkus.datasource.jdbc.url";
    static final String USERNAME = "quarkus.datasource.username";
    static final String PASSWORD = "quarkus.datasource.password";

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        Map<String, String> defaults = new HashMap<>();
        String reactiveUrl = value(context, REACTIVE_URL);
        List<String> profiles = context.getProfiles();

        String jdbcUrl = value(context, JDBC_URL);
        if (reactiveUrl == null && jdbcUrl != null && jdbcUrl.startsWith("jdbc:postgresql:")) {
            // Only the JDBC URL was given: the reactive pool reads the same address.
            reactiveUrl = jdbcUrl.substring("jdbc:".length());
            defaults.put(REACTIVE_URL, reactiveUrl);
        }
        if (reactiveUrl == null && profiles.contains("test") && System.getenv("TEST_PG_URL") != null) {
            reactiveUrl = System.getenv("TEST_PG_URL");
            defaults.put(REACTIVE_URL, reactiveUrl);
        } else if (reactiveUrl == null && value(context, JDBC_URL) == null
                && (profiles.contains("dev") || profiles.contains("test"))) {
            reactiveUrl = EmbeddedPostgresLauncher.startOrReuse(profiles.contains("dev"));
            defaults.put(REACTIVE_URL, reactiveUrl);
            defaults.put(USERNAME, "postgres");
        }

        if (reactiveUrl != null) {
            URI uri = URI.create(reactiveUrl.split(",")[0].trim());
            if (value(context, JDBC_URL) == null) {
                defaults.put(JDBC_URL, jdbcUrl(uri));
            }
            // The JDBC driver does not read credentials from the URL; Vert.x does. Share them.
            String userInfo = uri.getRawUserInfo();
            if (userInfo != null && value(context, USERNAME) == null) {
                String[] parts = userInfo.split(":", 2);
                defaults.put(USERNAME, decode(parts[0]));
                if (parts.length == 2 && value(context, PASSWORD) == null) {
                    defaults.put(PASSWORD, decode(parts[1]));
                }
            }
        }
        return List.of(new PropertiesConfigSource(defaults, "datasource-defaults", 150));
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(150);
    }

    static String jdbcUrl(URI reactive) {
        String host = reactive.getHost() == null ? "localhost" : reactive.getHost();
        String port = reactive.getPort() < 0 ? "" : ":" + reactive.getPort();
        String path = reactive.getRawPath() == null ? "/" : reactive.getRawPath();
        String query = reactive.getRawQuery() == null ? "" : "?" + reactive.getRawQuery();
        return "jdbc:postgresql://" + host + port + path + query;
    }

    private static String value(ConfigSourceContext context, String name) {
        ConfigValue value = context.getValue(name);
        return value == null || value.getValue() == null || value.getValue().isBlank() ? null : value.getValue();
    }

    private static String decode(String part) {
        return URLDecoder.decode(part, StandardCharsets.UTF_8);
    }
}
