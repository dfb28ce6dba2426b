package org.elasticsearch.plugins;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.elasticsearch.Build;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;

/**
 * The plugins of a node started without the distribution: plugin classes on the classpath, instantiated here, where
 * Elasticsearch's PluginsService reads bundles from the modules and plugins directories. In this package because the
 * loading helpers it reuses (loadPlugin, loadExtensions, LoadedPlugin) are package-private; the test framework's
 * MockPluginsService does the same.
 */
public class ClasspathPluginsService extends PluginsService {

    private final List<LoadedPlugin> classpathPlugins;

    public ClasspathPluginsService(Settings settings, Environment environment,
                                   Collection<Class<? extends Plugin>> pluginClasses) {
        super(settings, environment.configDir(), emptyLoader());
        List<LoadedPlugin> loaded = new ArrayList<>();
        for (Class<? extends Plugin> pluginClass : pluginClasses) {
            Plugin plugin = loadPlugin(pluginClass, settings, environment.configDir());
            PluginDescriptor descriptor = new PluginDescriptor(pluginClass.getName(), "classpath plugin", "NA",
                Build.current().version(), Integer.toString(Runtime.version().feature()), pluginClass.getName(), null,
                List.of(), false, false, false, false);
            loaded.add(new LoadedPlugin(descriptor, plugin, pluginClass.getClassLoader()));
        }
        loadExtensions(loaded);
        this.classpathPlugins = List.copyOf(loaded);
    }

    /**
     * A loader with no modules and no plugins. Not PluginsLoader.createPluginsLoader: it exports the server module's
     * packages to the plugins' module layers, and on the classpath the server is no named module (a
     * NullPointerException on Module.getDescriptor()).
     */
    public static PluginsLoader emptyLoader() {
        return new PluginsLoader(Set.of(), Set.of(), Map.of());
    }

    @Override
    protected final List<LoadedPlugin> plugins() {
        return classpathPlugins;
    }
}
