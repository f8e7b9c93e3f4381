package dev.svcstub.junit;

/** A word of the stub's control plane: the name it has on the wire, as the stub spells it. */
interface WireName {

    /** The name as the stub spells it ({@code "500"}, {@code "evaluate"}, {@code "projects.list"}). */
    String wireName();
}
