package io.hirekit.elasticsearch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node started from the launcher's layout answers over HTTP as Elasticsearch, with what person search uses. */
class LoopbackNodeTest {

    @TempDir
    static Path home;
    static LoopbackNode node;
    static String base;
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    @BeforeAll
    static void start() throws Exception {
        int http = freePort();
        int transport = freePort();
        LoopbackNode.Layout layout = LoopbackNode.parse(new String[] {
            "--home", home.toString(), "--name", "solo", "--http-port", String.valueOf(http),
            "--transport-port", String.valueOf(transport), "--seed-ports", String.valueOf(transport),
            "--cluster-managers", "solo", "--cluster-name", "launcher-test"});
        node = new LoopbackNode(layout.configuredEnvironment());
        node.start();
        base = "http://127.0.0.1:" + http;
    }

    @AfterAll
    static void stop() throws Exception {
        if (node != null) {
            node.close();
            assertTrue(node.awaitClose(20, TimeUnit.SECONDS), "the node closed");
        }
    }

    static HttpResponse<String> call(String method, String path, String body) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/json");
        request.method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                                           : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void clusterIsGreenWithItsOwnDirectoriesAndTheProductHeader() throws Exception {
        HttpResponse<String> health = call("GET", "/_cluster/health?wait_for_status=green&timeout=60s", null);
        assertEquals(200, health.statusCode(), health.body());
        assertEquals("Elasticsearch", health.headers().firstValue("X-elastic-product").orElse(""));
        assertTrue(health.body().contains("\"cluster_name\":\"launcher-test\""), health.body());
        assertTrue(health.body().contains("\"number_of_nodes\":1"), health.body());
        assertTrue(Files.exists(home.resolve("config").resolve("log4j2.properties")));
        assertTrue(Files.isDirectory(home.resolve("data")), "the node's data is under its home");
        HttpResponse<String> settings = call("GET", "/_nodes/solo/settings", null);
        assertTrue(settings.body().contains("\"initial_master_nodes\":[\"solo\"]"), settings.body());
        assertTrue(settings.body().contains("\"threshold_enabled\":\"false\""), settings.body());
    }

    @Test
    void searchesTheFieldTypesPersonSearchMapsInAPointInTime() throws Exception {
        String mapping = "{\"mappings\":{\"dynamic\":false,\"properties\":{\"title\":{\"type\":\"text\",\"analyzer\":"
            + "\"standard\"},\"company\":{\"type\":\"keyword\"},\"since\":{\"type\":\"date\",\"format\":"
            + "\"yyyy-MM-dd||yyyy-MM||yyyy\"},\"years\":{\"type\":\"long\"}}},\"settings\":{\"number_of_replicas\":0}}";
        HttpResponse<String> created = call("PUT", "/people", mapping);
        assertEquals(200, created.statusCode(), created.body());
        String bulk = "{\"index\":{\"_id\":\"p1\"}}\n{\"title\":\"Software Engineer\",\"company\":\"acme\","
            + "\"since\":\"2019-04\",\"years\":7}\n{\"index\":{\"_id\":\"p2\"}}\n{\"title\":\"Nurse\",\"company\":"
            + "\"clinic\",\"since\":\"2021\",\"years\":3}\n";
        HttpResponse<String> loaded = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/people/_bulk?refresh=true"))
            .header("Content-Type", "application/x-ndjson").POST(HttpRequest.BodyPublishers.ofString(bulk)).build(),
            HttpResponse.BodyHandlers.ofString());
        assertTrue(loaded.body().contains("\"errors\":false"), loaded.body());
        HttpResponse<String> pit = call("POST", "/people/_pit?keep_alive=1m", null);
        assertEquals(200, pit.statusCode(), pit.body());
        String id = pit.body().replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
        String found = call("POST", "/_search", "{\"pit\":{\"id\":\"" + id + "\"},\"query\":{\"bool\":{\"must\":"
            + "{\"match\":{\"title\":\"engineer\"}},\"filter\":[{\"range\":{\"since\":{\"gte\":\"2019\"}}},"
            + "{\"term\":{\"company\":\"acme\"}}]}},\"sort\":[{\"years\":\"desc\"}]}").body();
        assertTrue(found.contains("\"_id\":\"p1\"") && !found.contains("\"_id\":\"p2\""), found);
        assertEquals(200, call("DELETE", "/_pit", "{\"id\":\"" + id + "\"}").statusCode());
    }
}
