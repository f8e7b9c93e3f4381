package dev.svcstub.junit;

/**
 * What a fault applies to: a route, a management resource (every one of its routes) or a group,
 * in the stub's order ({@code Selector} in its OpenAPI document; a test checks this enum against it).
 */
public enum Selector implements WireName {
    /** Every route (the default). */
    ALL("all"),
    /** The runtime routes: evaluate, capture, register. */
    RUNTIME("runtime"),
    /** The vendor routes: flags, definitions, batch. */
    VENDOR("vendor"),
    /** The management plane: whoami, projects, environments, control points. */
    MANAGEMENT("management"),
    EVALUATE("evaluate"),
    CAPTURE("capture"),
    REGISTER("register"),
    FLAGS("flags"),
    DEFINITIONS("definitions"),
    BATCH("batch"),
    WHOAMI("whoami"),
    /** Every {@code projects.*} route. */
    PROJECTS("projects"),
    /** Every {@code environments.*} route. */
    ENVIRONMENTS("environments"),
    /** Every {@code control-points.*} route. */
    CONTROL_POINTS("control-points");

    private final String wireName;

    Selector(String wireName) {
        this.wireName = wireName;
    }

    @Override
    public String wireName() {
        return wireName;
    }
}
