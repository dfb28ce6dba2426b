package org.elasticsearch.node;

import java.util.Collection;

import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.ClasspathPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;

/**
 * A Node whose plugins are the given classes on the classpath. Elasticsearch 8's public constructor takes a
 * PluginsLoader (bundles from the modules and plugins directories, each in its own module layer); the construction
 * that lets a caller choose its PluginsService is package-private, hence this class in org.elasticsearch.node (the
 * test framework's MockNode does the same).
 */
public class ClasspathPluginsNode extends Node {

    public ClasspathPluginsNode(Environment environment, Collection<Class<? extends Plugin>> pluginClasses) {
        super(NodeConstruction.prepareConstruction(environment,
            ClasspathPluginsService.emptyLoader(), new NodeServiceProvider() {
                @Override
                PluginsService newPluginService(Environment env, PluginsLoader ignored) {
                    return new ClasspathPluginsService(env.settings(), env, pluginClasses);
                }
            }, true));
    }
}
