package io.hirekit.opensearch;

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
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A node started from the launcher's layout answers over HTTP with every module it was built with. */
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
    void clusterIsGreenWithItsOwnDirectoriesAndDiscovery() throws Exception {
        HttpResponse<String> health = call("GET", "/_cluster/health?wait_for_status=green&timeout=60s", null);
        assertEquals(200, health.statusCode(), health.body());
        assertTrue(health.body().contains("\"cluster_name\":\"launcher-test\""), health.body());
        assertTrue(health.body().contains("\"number_of_nodes\":1"), health.body());
        assertTrue(Files.exists(home.resolve("config").resolve("log4j2.properties")));
        assertTrue(Files.isDirectory(home.resolve("data").resolve("nodes")), "the node's data is under its home");
        HttpResponse<String> settings = call("GET", "/_nodes/solo/settings", null);
        assertTrue(settings.body().contains("\"initial_cluster_manager_nodes\":[\"solo\"]"), settings.body());
        assertTrue(settings.body().contains("\"threshold_enabled\":\"false\""), settings.body());
    }

    @Test
    void everyModuleAnswers() throws Exception {
        // mapper-extras: scaled_float; analysis-common: the snowball filter; lang-painless: a script query
        String mapping = "{\"mappings\":{\"properties\":{\"title\":{\"type\":\"text\",\"analyzer\":\"stemmed\"},"
            + "\"rate\":{\"type\":\"scaled_float\",\"scaling_factor\":100}}},"
            + "\"settings\":{\"number_of_replicas\":0,\"analysis\":{\"analyzer\":{\"stemmed\":{\"tokenizer\":"
            + "\"standard\",\"filter\":[\"lowercase\",\"snowball\"]}}}}}";
        HttpResponse<String> created = call("PUT", "/modules", mapping);
        assertEquals(200, created.statusCode(), created.body());
        for (String doc : List.of("{\"title\":\"Engineers engineering\",\"rate\":1.25}",
                                  "{\"title\":\"Nurse\",\"rate\":3.5}")) {
            assertEquals(201, call("POST", "/modules/_doc?refresh=true", doc).statusCode());
        }
        String stemmed = call("POST", "/modules/_search", "{\"query\":{\"match\":{\"title\":\"engineer\"}}}").body();
        assertTrue(stemmed.contains("\"value\":1"), stemmed);
        String scripted = call("POST", "/modules/_search", "{\"query\":{\"bool\":{\"filter\":{\"script\":{\"script\":"
            + "{\"source\":\"doc['rate'].value > 2\",\"lang\":\"painless\"}}}}}}").body();
        assertTrue(scripted.contains("Nurse") && !scripted.contains("Engineers"), scripted);
    }

    @Test
    void pointInTimeOpensAndCloses() throws Exception {
        call("PUT", "/walk", "{\"settings\":{\"number_of_replicas\":0}}");
        HttpResponse<String> pit = call("POST", "/walk/_search/point_in_time?keep_alive=1m", null);
        assertEquals(200, pit.statusCode(), pit.body());
        assertTrue(pit.body().contains("\"pit_id\""), pit.body());
    }
}
