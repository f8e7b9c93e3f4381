package dev.svcstub.junit;

import java.util.OptionalInt;

/**
 * The fault that fired on a request, as the journal records it, and where it came from.
 *
 * @param mode the mode's wire name ({@code "500"}, {@code "status"}; {@code "none"} for a sequence's step that let it through)
 * @param source {@code header}, {@code query}, {@code armed} or {@code rate-limit}
 * @param armedId the armed fault's id, when it was one
 * @param step the step of its sequence, counted from 0, when it was one
 */
public record FaultRecord(String mode, String source, OptionalInt armedId, OptionalInt step) {

    static FaultRecord from(Members members) {
        return new FaultRecord(members.string("mode"), members.string("source"), members.optionalInteger("armedId"),
                members.optionalInteger("step"));
    }

    /** Whether the fault that fired was {@code mode}. */
    public boolean is(FaultMode mode) {
        return this.mode.equals(mode.wireName());
    }
}
