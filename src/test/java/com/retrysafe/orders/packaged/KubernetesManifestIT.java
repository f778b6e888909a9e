package com.retrysafe.orders.packaged;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.Reader;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

/**
 * The Kubernetes manifest that quarkus-kubernetes writes at {@code package} time
 * ({@code target/kubernetes/kubernetes.yml}), checked against what deploy/README.md "Kubernetes" promises.
 * Each requirement is configured in one place (application.properties "Kubernetes manifests" or
 * src/main/kubernetes/kubernetes.yml), and removing it makes one of these tests fail.
 */
class KubernetesManifestIT {

    private static final Path KUBERNETES_DIR = Path.of(System.getProperty("kubernetes.dir", "target/kubernetes"));
    private static final Path APPLICATION_PROPERTIES = Path.of("src/main/resources/application.properties");
    private static final Path DOCKERFILE_JVM = Path.of("src/main/docker/Dockerfile.jvm");
    private static final Path CONFIG_EXAMPLE = Path.of("deploy/kubernetes/order-service-config.example.yml");
    private static final Path POSTGRES_CLUSTER = Path.of("deploy/kubernetes/postgres-cluster.yml");

    /**
     * PostgreSQL sessions that are not the pools': CloudNativePG's instance manager and exporter, an
     * administrator's psql, and sessions left behind by connections a pool closed while the session
     * still waited (deploy/README.md "Autoscaling").
     */
    private static final int SESSIONS_NOT_OURS = 15;

    private static final String NAME = "order-service";
    private static final String CONFIG_MAP = "order-service-config";
    private static final String SECRET = "order-service-secrets";
    private static final String JWT_CONFIG_MAP = "order-service-jwt";
    private static final String JWT_KEY_FILE = "jwt-public.pem";

    /** The service's peak RSS under load, in MiB (bench/README.md; deploy/README.md "Sizing, per pod"). */
    private static final long MEASURED_PEAK_RSS_MIB = 374;
    /** Non-heap memory (NMT) measured under load with the heap capped as in a pod (deploy/README.md "Sizing, per pod"). */
    private static final long MEASURED_NON_HEAP_MIB = 190;

    /** Environment variable names whose values must never be written into the manifest. */
    private static final Pattern SENSITIVE_NAME = Pattern.compile(
            "(?i).*(PASSWORD|PASSWD|SECRET|TOKEN|PRIVATE|CREDENTIAL|USERNAME|API_?KEY).*");
    /** A URL with a password in its user info, e.g. postgresql://user:pw@host/db. */
    private static final Pattern URL_WITH_PASSWORD = Pattern.compile("://[^/\\s@:]+:[^/\\s@]*@");

    private static List<JsonNode> resources;
    private static JsonNode deployment;
    private static JsonNode podSpec;
    private static JsonNode container;
    private static Properties properties;

    @BeforeAll
    static void load() throws IOException {
        Path yaml = KUBERNETES_DIR.resolve("kubernetes.yml");
        assertTrue(Files.isRegularFile(yaml), yaml + " is missing: quarkus-kubernetes writes it at ./mvnw package");
        resources = readYaml(yaml);
        deployment = single("Deployment", NAME);
        podSpec = deployment.at("/spec/template/spec");
        assertTrue(podSpec.isObject(), "the Deployment has no pod template spec");
        container = containerNamed(podSpec, NAME);

        properties = new Properties();
        try (Reader reader = Files.newBufferedReader(APPLICATION_PROPERTIES)) {
            properties.load(reader);
        }
    }

    @Test
    void theJsonVariantHasTheSameResources() throws IOException {
        Path json = KUBERNETES_DIR.resolve("kubernetes.json");
        assertTrue(Files.isRegularFile(json), json + " is missing");
        JsonNode root = new ObjectMapper().readTree(json.toFile());
        JsonNode items = root.isArray() ? root : root.path("items");
        List<String> jsonKinds = new ArrayList<>();
        items.forEach(item -> jsonKinds.add(item.path("kind").asText() + "/" + item.at("/metadata/name").asText()));
        List<String> yamlKinds = new ArrayList<>();
        resources.forEach(item -> yamlKinds.add(item.path("kind").asText() + "/" + item.at("/metadata/name").asText()));
        assertEquals(new TreeSet<>(yamlKinds), new TreeSet<>(jsonKinds));
    }

    @Test
    void moreThanOneReplica() {
        int replicas = deployment.at("/spec/replicas").asInt(1);
        assertTrue(replicas >= 2, "spec.replicas is " + replicas + ": one pod is a single point of failure"
                + " (quarkus.kubernetes.replicas)");
    }

    @Test
    void rollingUpdateNeverDropsBelowTheReplicaCount() {
        assertEquals("RollingUpdate", deployment.at("/spec/strategy/type").asText());
        assertEquals("0", deployment.at("/spec/strategy/rollingUpdate/maxUnavailable").asText(),
                "quarkus.kubernetes.rolling-update.max-unavailable");
    }

    @Test
    void selectorsDoNotCarryTheVersion() {
        // A Deployment's selector is immutable: with the version in it, no upgrade could be applied.
        JsonNode selector = deployment.at("/spec/selector/matchLabels");
        assertEquals(NAME, selector.path("app.kubernetes.io/name").asText(), "selector: " + selector);
        assertFalse(selector.has("app.kubernetes.io/version"),
                "the Deployment selector includes the version"
                        + " (quarkus.kubernetes.add-version-to-label-selectors=false): " + selector);
        JsonNode serviceSelector = single("Service", NAME).at("/spec/selector");
        assertFalse(serviceSelector.has("app.kubernetes.io/version"), "Service selector: " + serviceSelector);
    }

    @Test
    void probesOnTheHealthEndpoints() {
        int httpPort = containerPort("http");
        Map<String, String> expected = Map.of(
                "startupProbe", "/q/health/started",
                "livenessProbe", "/q/health/live",
                "readinessProbe", "/q/health/ready");
        expected.forEach((probe, path) -> {
            JsonNode httpGet = container.path(probe).path("httpGet");
            assertTrue(httpGet.isObject(), probe + " is missing or not an HTTP probe: " + container.path(probe));
            assertEquals(path, httpGet.path("path").asText(), probe + " path");
            assertEquals(httpPort, resolvePort(httpGet.path("port")), probe + " port");
        });
        // The startup probe must leave time for JVM start and Flyway (possibly waiting for another
        // replica's migration lock) before the kubelet restarts the container.
        JsonNode startup = container.path("startupProbe");
        long budget = startup.path("initialDelaySeconds").asLong(0)
                + startup.path("periodSeconds").asLong(10) * startup.path("failureThreshold").asLong(3);
        assertTrue(budget >= 60, "the startup probe allows only " + budget + " s before a restart");
    }

    @Test
    void memorySizedFromTheMeasuredPeakAndCpuRequested() throws IOException {
        JsonNode resourcesNode = container.path("resources");
        String requestMemory = resourcesNode.at("/requests/memory").asText(null);
        String limitMemory = resourcesNode.at("/limits/memory").asText(null);
        String requestCpu = resourcesNode.at("/requests/cpu").asText(null);
        assertNotNull(requestMemory, "no memory request: " + resourcesNode);
        assertNotNull(limitMemory, "no memory limit: " + resourcesNode);
        assertNotNull(requestCpu, "no cpu request: " + resourcesNode);

        long limitMiB = bytes(limitMemory) / (1024 * 1024);
        assertEquals(bytes(limitMemory), bytes(requestMemory),
                "memory request != limit: a JVM keeps what it takes, so a pod above its request is evicted first");
        assertTrue(limitMiB >= MEASURED_PEAK_RSS_MIB * 5 / 4, "memory limit " + limitMemory
                + " leaves less than 25 % headroom over the measured peak RSS of " + MEASURED_PEAK_RSS_MIB + " MiB");

        // Dockerfile.jvm lets the heap take MaxRAMPercentage of the limit; the rest must hold the
        // measured non-heap memory, or a full heap gets the container OOM-killed.
        Matcher percentage = Pattern.compile("MaxRAMPercentage=([0-9.]+)").matcher(Files.readString(DOCKERFILE_JVM));
        assertTrue(percentage.find(), DOCKERFILE_JVM + " no longer sets -XX:MaxRAMPercentage");
        double heapShare = Double.parseDouble(percentage.group(1)) / 100;
        double nonHeapRoom = limitMiB * (1 - heapShare);
        assertTrue(nonHeapRoom >= MEASURED_NON_HEAP_MIB, "with MaxRAMPercentage=" + percentage.group(1) + " a "
                + limitMemory + " limit leaves " + (long) nonHeapRoom + " MiB outside the heap, less than the measured "
                + MEASURED_NON_HEAP_MIB + " MiB");

        assertTrue(millicores(requestCpu) > 0, "cpu request " + requestCpu);
    }

    @Test
    void prometheusScrapeAnnotationsOnThePods() {
        JsonNode annotations = deployment.at("/spec/template/metadata/annotations");
        assertEquals("true", annotations.path("prometheus.io/scrape").asText(), "pod annotations: " + annotations);
        assertEquals("/q/metrics", annotations.path("prometheus.io/path").asText(), "pod annotations: " + annotations);
        assertEquals(String.valueOf(containerPort("http")), annotations.path("prometheus.io/port").asText(),
                "pod annotations: " + annotations);
    }

    @Test
    void settingsComeFromTheConfigMapAndTheSecretByName() {
        Set<String> configMaps = new TreeSet<>();
        Set<String> secrets = new TreeSet<>();
        container.path("envFrom").forEach(source -> {
            if (source.has("configMapRef")) {
                configMaps.add(source.at("/configMapRef/name").asText());
                assertFalse(source.at("/configMapRef/optional").asBoolean(false), "the ConfigMap must not be optional");
            }
            if (source.has("secretRef")) {
                secrets.add(source.at("/secretRef/name").asText());
                assertFalse(source.at("/secretRef/optional").asBoolean(false), "the Secret must not be optional");
            }
        });
        assertEquals(Set.of(CONFIG_MAP), configMaps, "envFrom ConfigMaps (quarkus.kubernetes.env.configmaps)");
        assertEquals(Set.of(SECRET), secrets, "envFrom Secrets (quarkus.kubernetes.env.secrets)");
    }

    @Test
    void theJwtPublicKeyIsAMountedFile() {
        String volume = null;
        for (JsonNode candidate : podSpec.path("volumes")) {
            if (JWT_CONFIG_MAP.equals(candidate.at("/configMap/name").asText())
                    || JWT_CONFIG_MAP.equals(candidate.at("/secret/secretName").asText())) {
                volume = candidate.path("name").asText();
            }
        }
        assertNotNull(volume, "no volume from " + JWT_CONFIG_MAP + ": " + podSpec.path("volumes"));
        String mountPath = null;
        for (JsonNode mount : container.path("volumeMounts")) {
            if (volume.equals(mount.path("name").asText())) {
                mountPath = mount.path("mountPath").asText();
                assertTrue(mount.path("readOnly").asBoolean(false), "the key's mount is not read-only");
            }
        }
        assertNotNull(mountPath, "volume " + volume + " is not mounted in the container");
        String location = env(container).get("MP_JWT_VERIFY_PUBLICKEY_LOCATION");
        assertEquals(mountPath.replaceAll("/$", "") + "/" + JWT_KEY_FILE, location,
                "MP_JWT_VERIFY_PUBLICKEY_LOCATION must name the mounted key file");
    }

    @Test
    void noSecretValueIsWrittenIntoTheManifest() throws IOException {
        String text = Files.readString(KUBERNETES_DIR.resolve("kubernetes.yml"));
        assertFalse(text.contains("PRIVATE KEY"), "the manifest contains a private key");
        for (JsonNode resource : resources) {
            String id = resource.path("kind").asText() + "/" + resource.at("/metadata/name").asText();
            assertFalse("Secret".equals(resource.path("kind").asText()),
                    id + ": Secrets are created separately (deploy/kubernetes/), never generated with their values");
            for (JsonNode pod : podSpecs(resource)) {
                for (String list : List.of("containers", "initContainers")) {
                    for (JsonNode c : pod.path(list)) {
                        for (JsonNode variable : c.path("env")) {
                            String name = variable.path("name").asText();
                            if (!variable.has("value")) {
                                continue;
                            }
                            String value = variable.path("value").asText();
                            assertFalse(SENSITIVE_NAME.matcher(name).matches(),
                                    id + ": " + name + " has a literal value; take it from the Secret " + SECRET);
                            assertFalse(URL_WITH_PASSWORD.matcher(value).find(),
                                    id + ": " + name + " holds a password");
                        }
                    }
                }
            }
        }
    }

    @Test
    void aPodDisruptionBudgetSelectsTheDeploymentsPods() {
        JsonNode pdb = single("PodDisruptionBudget", NAME);
        assertEquals("policy/v1", pdb.path("apiVersion").asText());
        JsonNode selector = pdb.at("/spec/selector/matchLabels");
        assertTrue(selector.isObject() && selector.size() > 0, "the PodDisruptionBudget selects nothing: " + pdb);
        assertEquals(deployment.at("/spec/selector/matchLabels"), selector,
                "the PodDisruptionBudget must select exactly the Deployment's pods");
        JsonNode podLabels = deployment.at("/spec/template/metadata/labels");
        selector.properties().forEach(label -> assertEquals(label.getValue(), podLabels.path(label.getKey()),
                "pod label " + label.getKey()));

        int replicas = deployment.at("/spec/replicas").asInt(1);
        JsonNode spec = pdb.path("spec");
        if (spec.has("maxUnavailable")) {
            int maxUnavailable = spec.path("maxUnavailable").asInt(-1);
            assertTrue(maxUnavailable >= 1 && maxUnavailable < replicas,
                    "maxUnavailable " + spec.path("maxUnavailable") + " with " + replicas + " replicas");
        } else {
            int minAvailable = spec.path("minAvailable").asInt(-1);
            assertTrue(minAvailable >= 1 && minAvailable < replicas,
                    "minAvailable " + spec.path("minAvailable") + " with " + replicas + " replicas");
        }
    }

    @Test
    void terminationGracePeriodOutlastsTheGracefulShutdown() {
        String timeoutValue = property("quarkus.shutdown.timeout");
        if (timeoutValue == null) {
            fail("quarkus.shutdown.timeout is not set in " + APPLICATION_PROPERTIES + ": without it Quarkus does not"
                    + " wait for requests in flight, and terminationGracePeriodSeconds cannot be checked against it");
        }
        Duration timeout = duration("quarkus.shutdown.timeout", timeoutValue);
        Duration delay = Duration.ZERO;
        if (Boolean.parseBoolean(property("quarkus.shutdown.delay-enabled"))
                && property("quarkus.shutdown.delay") != null) {
            delay = duration("quarkus.shutdown.delay", property("quarkus.shutdown.delay"));
        }
        JsonNode grace = podSpec.path("terminationGracePeriodSeconds");
        assertTrue(grace.isNumber(), "terminationGracePeriodSeconds is not set (src/main/kubernetes/kubernetes.yml);"
                + " Kubernetes' default of 30 s is not derived from the shutdown settings");
        long needed = timeout.plus(delay).toSeconds();
        assertTrue(grace.asLong() > needed, "terminationGracePeriodSeconds " + grace.asLong()
                + " does not exceed the shutdown delay + timeout (" + delay.toSeconds() + " + " + timeout.toSeconds()
                + " s): the kubelet would SIGKILL requests still in flight");
    }

    @Test
    void noInitJobAndRunsAsNonRoot() {
        // Every replica migrates at start-up (quarkus.kubernetes.init-task-defaults.enabled=false).
        // A generated Flyway Job would get none of the ConfigMap/Secret settings and never finish.
        for (JsonNode resource : resources) {
            assertFalse(Set.of("Job", "CronJob").contains(resource.path("kind").asText()),
                    "unexpected " + resource.path("kind").asText() + " " + resource.at("/metadata/name").asText());
        }
        assertTrue(podSpec.path("initContainers").isEmpty(), "init containers: " + podSpec.path("initContainers"));
        assertTrue(podSpec.at("/securityContext/runAsNonRoot").asBoolean(false), "runAsNonRoot is not set");
    }

    @Test
    void theExampleConfigurationDefinesWhatTheManifestReferencesWithPlaceholdersOnly() throws IOException {
        List<JsonNode> example = readYaml(CONFIG_EXAMPLE);
        Map<String, JsonNode> byName = new HashMap<>();
        example.forEach(resource -> byName.put(
                resource.path("kind").asText() + "/" + resource.at("/metadata/name").asText(), resource));
        JsonNode config = byName.get("ConfigMap/" + CONFIG_MAP);
        JsonNode secret = byName.get("Secret/" + SECRET);
        JsonNode jwt = byName.get("ConfigMap/" + JWT_CONFIG_MAP);
        assertNotNull(config, CONFIG_EXAMPLE + " has no ConfigMap " + CONFIG_MAP);
        assertNotNull(secret, CONFIG_EXAMPLE + " has no Secret " + SECRET);
        assertNotNull(jwt, CONFIG_EXAMPLE + " has no ConfigMap " + JWT_CONFIG_MAP);
        assertTrue(config.at("/data/QUARKUS_DATASOURCE_REACTIVE_URL").isTextual());
        assertTrue(config.at("/data/MP_JWT_VERIFY_ISSUER").isTextual());
        assertTrue(jwt.at("/data/" + JWT_KEY_FILE).isTextual());

        Map<String, String> secretValues = new TreeMap<>();
        secret.path("stringData").properties().forEach(e -> secretValues.put(e.getKey(), e.getValue().asText()));
        assertTrue(secretValues.containsKey("QUARKUS_DATASOURCE_PASSWORD"),
                "example Secret keys: " + secretValues.keySet());
        assertFalse(secret.has("data"), "the example Secret must hold placeholders in stringData, not encoded data");
        secretValues.forEach((key, value) -> assertEquals("REPLACE_ME", value, "example Secret " + key));
        for (JsonNode value : config.path("data")) {
            assertFalse(URL_WITH_PASSWORD.matcher(value.asText()).find(), "a password in the example ConfigMap");
        }
    }

    /**
     * API.md section 11: no acknowledged order is lost in a failover only with a synchronous
     * standby, and the service must reach the primary through the address that follows it.
     */
    @Test
    void theDatabaseClusterHasASynchronousStandbyAndTheServiceUsesItsReadWriteService() throws IOException {
        List<JsonNode> resources = readYaml(Path.of("deploy/kubernetes/postgres-cluster.yml"));
        JsonNode cluster = resources.stream().filter(r -> "Cluster".equals(r.path("kind").asText())).findFirst()
                .orElseThrow(() -> new AssertionError("no CloudNativePG Cluster in deploy/kubernetes/postgres-cluster.yml"));
        assertEquals("postgresql.cnpg.io/v1", cluster.path("apiVersion").asText());
        JsonNode synchronous = cluster.at("/spec/postgresql/synchronous");
        assertTrue(synchronous.path("number").asInt() >= 1, "a synchronous standby: " + synchronous);
        assertEquals("required", synchronous.path("dataDurability").asText(),
                "writes wait for a standby rather than being acknowledged on the primary alone");
        assertTrue(cluster.at("/spec/instances").asInt() >= 2, "a primary and at least one standby");

        JsonNode config = readYaml(CONFIG_EXAMPLE).stream()
                .filter(r -> CONFIG_MAP.equals(r.at("/metadata/name").asText())).findFirst().orElseThrow();
        String url = config.at("/data/QUARKUS_DATASOURCE_REACTIVE_URL").asText();
        assertEquals(cluster.at("/metadata/name").asText() + "-rw", java.net.URI.create(url).getHost(),
                "the service reaches the primary through the cluster's read-write Service: " + url);
    }

    /**
     * deploy/README.md "Autoscaling": a HorizontalPodAutoscaler scales the Deployment on CPU, up at
     * once and down slowly, and never to more pods than PostgreSQL's max_connections holds with
     * every pool full and a surge pod rolling out.
     */
    @Test
    void theAutoscalerScalesOnCpuWithinPostgresConnections() throws IOException {
        JsonNode hpa = single("HorizontalPodAutoscaler", NAME);
        assertEquals("autoscaling/v2", hpa.path("apiVersion").asText());
        JsonNode target = hpa.at("/spec/scaleTargetRef");
        assertEquals("apps/v1", target.path("apiVersion").asText(), "scaleTargetRef: " + target);
        assertEquals("Deployment", target.path("kind").asText(), "scaleTargetRef: " + target);
        assertEquals(NAME, target.path("name").asText(), "scaleTargetRef: " + target);

        int minReplicas = hpa.at("/spec/minReplicas").asInt(1);
        int maxReplicas = hpa.at("/spec/maxReplicas").asInt(0);
        assertEquals(deployment.at("/spec/replicas").asInt(1), minReplicas,
                "minReplicas must be the Deployment's replicas: applying the manifest then never scales below the"
                        + " minimum (and the PodDisruptionBudget was sized for it)");
        assertTrue(maxReplicas > minReplicas, "maxReplicas " + maxReplicas + " leaves nothing to scale to");

        JsonNode metrics = hpa.at("/spec/metrics");
        assertEquals(1, metrics.size(), "one signal, CPU (deploy/README.md \"Autoscaling\"): " + metrics);
        JsonNode metric = metrics.get(0);
        assertEquals("Resource", metric.path("type").asText(), "metric: " + metric);
        assertEquals("cpu", metric.at("/resource/name").asText(), "metric: " + metric);
        assertEquals("Utilization", metric.at("/resource/target/type").asText(), "metric: " + metric);
        int utilization = metric.at("/resource/target/averageUtilization").asInt(0);
        assertTrue(utilization > 0 && utilization <= 100, "averageUtilization " + utilization
                + ": of the CPU request; above 100 a pod's one event loop would be busy before it scales");
        assertNotNull(container.at("/resources/requests/cpu").asText(null),
                "CPU utilization is measured against the container's CPU request, which is missing");

        int pool = Integer.parseInt(property("quarkus.datasource.reactive.max-size"));
        String surgeText = deployment.at("/spec/strategy/rollingUpdate/maxSurge").asText("1");
        assertFalse(surgeText.endsWith("%"), "maxSurge " + surgeText + ": give it in pods, so the sum below holds");
        int surge = Integer.parseInt(surgeText);
        JsonNode parameters = postgresCluster().at("/spec/postgresql/parameters");
        int maxConnections = parameters.path("max_connections").asInt(100);
        int superuserReserved = parameters.path("superuser_reserved_connections").asInt(3);
        int serviceConnections = (maxReplicas + surge) * pool;
        assertTrue(serviceConnections + superuserReserved + SESSIONS_NOT_OURS <= maxConnections,
                "(maxReplicas " + maxReplicas + " + surge " + surge + ") x pool " + pool + " = " + serviceConnections
                        + " connections, + " + superuserReserved + " reserved for the superuser + " + SESSIONS_NOT_OURS
                        + " for other sessions, is more than max_connections " + maxConnections
                        + " (deploy/kubernetes/postgres-cluster.yml): new connections would fail with 53300");

        JsonNode behavior = hpa.at("/spec/behavior");
        int upWindow = behavior.at("/scaleUp/stabilizationWindowSeconds").asInt(0);
        int downWindow = behavior.at("/scaleDown/stabilizationWindowSeconds").asInt(300);
        assertTrue(upWindow <= 30, "scale up at once: scaleUp.stabilizationWindowSeconds is " + upWindow);
        assertTrue(downWindow >= 300, "scale down slowly: scaleDown.stabilizationWindowSeconds is " + downWindow);
        for (JsonNode policy : behavior.at("/scaleDown/policies")) {
            assertTrue("Pods".equals(policy.path("type").asText()) && policy.path("value").asInt() <= 1
                    && policy.path("periodSeconds").asInt() >= 60,
                    "scale down at most one pod a minute: " + policy);
        }
    }

    /**
     * deploy/kubernetes/postgres-cluster.yml: PostgreSQL polls the socket of a session running a
     * statement, so one whose client closed the connection (a deadline passed) ends within the
     * interval instead of holding a connection slot until statement_timeout.
     */
    @Test
    void theDatabaseEndsStatementsWhoseClientLeft() throws IOException {
        JsonNode parameters = postgresCluster().at("/spec/postgresql/parameters");
        String interval = parameters.path("client_connection_check_interval").asText(null);
        assertNotNull(interval, "client_connection_check_interval is not set in deploy/kubernetes/postgres-cluster.yml:"
                + " PostgreSQL's default 0 lets a statement whose client left run to its statement_timeout");
        Duration check = duration("client_connection_check_interval", interval);
        String dbTimeout = property("idempotency.db-timeout");
        Duration statementTimeout = dbTimeout == null ? Duration.ofSeconds(5) : duration("idempotency.db-timeout", dbTimeout);
        assertTrue(!check.isZero() && check.compareTo(statementTimeout) < 0, "client_connection_check_interval "
                + interval + " must be above 0 and below statement_timeout (idempotency.db-timeout, " + statementTimeout
                + "), or it ends nothing sooner");
    }

    // ---------------------------------------------------------------------------------------------

    private static JsonNode postgresCluster() throws IOException {
        return readYaml(POSTGRES_CLUSTER).stream().filter(r -> "Cluster".equals(r.path("kind").asText())).findFirst()
                .orElseThrow(() -> new AssertionError("no CloudNativePG Cluster in " + POSTGRES_CLUSTER));
    }

    private static List<JsonNode> readYaml(Path file) throws IOException {
        List<JsonNode> documents = new ArrayList<>();
        try (MappingIterator<JsonNode> iterator =
                new YAMLMapper().readerFor(JsonNode.class).readValues(file.toFile())) {
            while (iterator.hasNextValue()) {
                JsonNode document = iterator.nextValue();
                if (document != null && document.isObject()) {
                    documents.add(document);
                }
            }
        }
        return documents;
    }

    private static JsonNode single(String kind, String name) {
        List<JsonNode> matches = resources.stream()
                .filter(r -> kind.equals(r.path("kind").asText()) && name.equals(r.at("/metadata/name").asText()))
                .toList();
        assertEquals(1, matches.size(), "resources " + kind + "/" + name + " in the manifest");
        return matches.get(0);
    }

    private static JsonNode containerNamed(JsonNode pod, String name) {
        for (JsonNode candidate : pod.path("containers")) {
            if (name.equals(candidate.path("name").asText())) {
                return candidate;
            }
        }
        throw new AssertionError("no container " + name + " in " + pod.path("containers"));
    }

    private static List<JsonNode> podSpecs(JsonNode resource) {
        List<JsonNode> pods = new ArrayList<>();
        for (String pointer : List.of("/spec/template/spec", "/spec/jobTemplate/spec/template/spec")) {
            if (resource.at(pointer).isObject()) {
                pods.add(resource.at(pointer));
            }
        }
        return pods;
    }

    private static int containerPort(String name) {
        for (JsonNode port : container.path("ports")) {
            if (name.equals(port.path("name").asText())) {
                return port.path("containerPort").asInt();
            }
        }
        throw new AssertionError("no container port named " + name + ": " + container.path("ports"));
    }

    private static int resolvePort(JsonNode port) {
        return port.isInt() ? port.asInt() : containerPort(port.asText());
    }

    private static Map<String, String> env(JsonNode c) {
        Map<String, String> values = new HashMap<>();
        c.path("env").forEach(
                variable -> values.put(variable.path("name").asText(), variable.path("value").asText(null)));
        return values;
    }

    /** The value the prod profile sees: {@code %prod.name} wins over {@code name}. */
    private static String property(String name) {
        String value = properties.getProperty("%prod." + name, properties.getProperty(name));
        return value == null ? null : value.trim();
    }

    /** SmallRye Config's duration syntax: 20 (seconds), 500ms, 20s, 1m, 1h, 1d, or ISO-8601 (PT20S). */
    static Duration duration(String name, String value) {
        if (value.contains("${")) {
            fail(name + " = " + value + ": an expression; give a literal duration so the grace period can be checked");
        }
        Matcher m = Pattern.compile("(\\d+)(ms|s|m|h|d)?").matcher(value.toLowerCase(Locale.ROOT));
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            return switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                case "h" -> Duration.ofHours(amount);
                default -> Duration.ofDays(amount);
            };
        }
        return Duration.parse(value.toUpperCase(Locale.ROOT));
    }

    /** A Kubernetes memory quantity in bytes: 768Mi, 1Gi, 512M, 805306368. */
    static long bytes(String quantity) {
        Matcher m = Pattern.compile("([0-9.]+)(Ki|Mi|Gi|Ti|k|M|G|T)?").matcher(quantity);
        assertTrue(m.matches(), "memory quantity " + quantity);
        BigDecimal amount = new BigDecimal(m.group(1));
        long factor = switch (m.group(2) == null ? "" : m.group(2)) {
            case "Ki" -> 1L << 10;
            case "Mi" -> 1L << 20;
            case "Gi" -> 1L << 30;
            case "Ti" -> 1L << 40;
            case "k" -> 1_000L;
            case "M" -> 1_000_000L;
            case "G" -> 1_000_000_000L;
            case "T" -> 1_000_000_000_000L;
            default -> 1L;
        };
        return amount.multiply(BigDecimal.valueOf(factor)).longValue();
    }

    /** A Kubernetes CPU quantity in millicores: 500m, 0.5, 2. */
    static long millicores(String quantity) {
        if (quantity.endsWith("m")) {
            return Long.parseLong(quantity.substring(0, quantity.length() - 1));
        }
        return new BigDecimal(quantity).multiply(BigDecimal.valueOf(1000)).longValue();
    }
}
