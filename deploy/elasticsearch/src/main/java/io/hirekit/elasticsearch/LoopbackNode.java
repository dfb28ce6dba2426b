package io.hirekit.elasticsearch;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.ClasspathPluginsNode;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.transport.netty4.Netty4Plugin;

/**
 * One Elasticsearch 8 node in this JVM, on loopback, built from Maven Central's jars rather than the distribution:
 * its one module, transport-netty4, is a plugin class on the classpath (a class literal, so a missing jar fails the
 * build), and the node never goes through the launcher or Bootstrap (no security manager, no entitlements, no
 * x-pack: security is absent rather than disabled), so it runs as any user, root included.
 *
 * <p>Usage: {@code LoopbackNode --home DIR --name NODE --http-port P --transport-port T
 * --seed-ports T1,T2,T3 --cluster-managers NODE1,NODE2,NODE3 [--cluster-name NAME] [-Ekey=value ...]}, the
 * arguments deploy/opensearch's launcher takes. DIR holds the node's config (log4j2.properties is written there),
 * data and logs directories; each -E adds a node setting. SIGTERM closes the node cleanly.
 */
public final class LoopbackNode extends ClasspathPluginsNode {

    /** The distribution's modules this node has: HTTP and transport. */
    public static final List<Class<? extends Plugin>> PLUGINS = List.of(Netty4Plugin.class);

    public LoopbackNode(Environment environment) {
        super(environment, PLUGINS);
    }

    /** What one node is: its directories, ports and the cluster it forms or joins. */
    public record Layout(Path home, String nodeName, int httpPort, int transportPort, List<Integer> seedPorts,
                         List<String> masterNodes, String clusterName, Map<String, String> extra) {

        public Settings settings() {
            return Settings.builder()
                .put("path.home", home.toString())
                .put("path.data", home.resolve("data").toString())
                .put("path.logs", home.resolve("logs").toString())
                .put("cluster.name", clusterName)
                .put("node.name", nodeName)
                .put("network.host", "127.0.0.1")
                .put("http.port", httpPort)
                .put("transport.port", transportPort)
                .putList("discovery.seed_hosts",
                    seedPorts.stream().map(port -> "127.0.0.1:" + port).collect(Collectors.toList()))
                .putList("cluster.initial_master_nodes", masterNodes)
                // a test machine's disk is whatever it is: never refuse shards or writes for its fill level
                .put("cluster.routing.allocation.disk.threshold_enabled", false)
                .put(Settings.builder().loadFromMap(extra).build())
                .build();
        }

        /** The node's environment: its settings through InternalSettingsPreparer, with the log config in place. */
        public Environment environment() throws IOException {
            Path config = home.resolve("config");
            Files.createDirectories(config);
            Files.createDirectories(home.resolve("data"));
            Files.createDirectories(home.resolve("logs"));
            Path logConfig = config.resolve("log4j2.properties");
            if (Files.notExists(logConfig)) {
                try (InputStream source = LoopbackNode.class.getResourceAsStream("log4j2.properties")) {
                    Files.copy(source, logConfig);
                }
            }
            return InternalSettingsPreparer.prepareEnvironment(settings(), Map.of(), config, () -> nodeName);
        }

        /** The environment, with log4j configured from its log4j2.properties (once per JVM). */
        public Environment configuredEnvironment() throws Exception {
            Environment environment = environment();
            LogConfigurator.registerErrorListener();
            LogConfigurator.setNodeName(nodeName);
            LogConfigurator.setClusterName(clusterName);
            LogConfigurator.configure(environment, false);
            return environment;
        }
    }

    public static Layout parse(String[] args) {
        Map<String, String> options = new HashMap<>();
        Map<String, String> extra = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].startsWith("-E") && args[i].indexOf('=') > 2) {
                int equals = args[i].indexOf('=');
                extra.put(args[i].substring(2, equals), args[i].substring(equals + 1));
            } else if (args[i].startsWith("--") && i + 1 < args.length) {
                options.put(args[i].substring(2), args[++i]);
            } else {
                throw new IllegalArgumentException("expected --option value or -Ekey=value, got " + args[i]);
            }
        }
        for (String required : List.of("home", "name", "http-port", "transport-port", "seed-ports",
                                        "cluster-managers")) {
            if (!options.containsKey(required)) {
                throw new IllegalArgumentException("missing --" + required);
            }
        }
        List<Integer> seeds = new ArrayList<>();
        for (String port : options.get("seed-ports").split(",")) {
            seeds.add(Integer.parseInt(port.trim()));
        }
        return new Layout(Paths.get(options.get("home")).toAbsolutePath(), options.get("name"),
            Integer.parseInt(options.get("http-port")), Integer.parseInt(options.get("transport-port")), seeds,
            Arrays.asList(options.get("cluster-managers").split(",")),
            options.getOrDefault("cluster-name", "hirekit"), extra);
    }

    /** Start a node and keep it running until the JVM is asked to stop (SIGTERM, SIGINT). */
    public static void main(String[] args) throws Exception {
        Layout layout = parse(args);
        LoopbackNode node = new LoopbackNode(layout.configuredEnvironment());
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (Exception error) {
                error.printStackTrace();
            } finally {
                closed.countDown();
            }
        }, "hirekit-node-shutdown"));
        node.start();
        System.out.println("started " + layout.nodeName() + " http=127.0.0.1:" + layout.httpPort());
        System.out.flush();
        closed.await();
    }
}
