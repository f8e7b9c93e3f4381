package dev.svcstub.junit;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The name a request is recorded under in the journal, for {@link SvcStub#requests(Route)} and
 * the assertions. The route names are the stub's, in its order ({@code RouteName} in its OpenAPI
 * document; a test checks them against it); {@link #PROJECTS}, {@link #ENVIRONMENTS} and
 * {@link #CONTROL_POINTS} keep every route of a management resource, and {@link #PREFLIGHT} a
 * browser's preflight requests.
 */
public enum Route implements WireName {
    EVALUATE("evaluate"),
    CAPTURE("capture"),
    REGISTER("register"),
    FLAGS("flags"),
    DEFINITIONS("definitions"),
    BATCH("batch"),
    WHOAMI("whoami"),
    PROJECTS_LIST("projects.list"),
    PROJECTS_CREATE("projects.create"),
    PROJECTS_GET("projects.get"),
    PROJECTS_UPDATE("projects.update"),
    PROJECTS_DELETE("projects.delete"),
    ENVIRONMENTS_LIST("environments.list"),
    ENVIRONMENTS_CREATE("environments.create"),
    ENVIRONMENTS_GET("environments.get"),
    ENVIRONMENTS_UPDATE("environments.update"),
    ENVIRONMENTS_DELETE("environments.delete"),
    CONTROL_POINTS_LIST("control-points.list"),
    CONTROL_POINTS_GRAPH("control-points.graph"),
    /** Every {@code projects.*} route. */
    PROJECTS("projects", false),
    /** Every {@code environments.*} route. */
    ENVIRONMENTS("environments", false),
    /** Every {@code control-points.*} route. */
    CONTROL_POINTS("control-points", false),
    /** A browser's preflight: listed in the journal, but no client's request. */
    PREFLIGHT("preflight", false);

    private final String wireName;
    private final boolean routeName;

    Route(String wireName) {
        this(wireName, true);
    }

    Route(String wireName, boolean routeName) {
        this.wireName = wireName;
        this.routeName = routeName;
    }

    @Override
    public String wireName() {
        return wireName;
    }

    /** Whether this is one route's name, rather than a resource's routes or the preflights. */
    public boolean isRouteName() {
        return routeName;
    }

    /** Every route's name, in the stub's order. */
    public static List<Route> routeNames() {
        return Arrays.stream(values()).filter(Route::isRouteName).collect(Collectors.toUnmodifiableList());
    }
}
