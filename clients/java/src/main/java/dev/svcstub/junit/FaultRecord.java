package dev.svcstub.junit;

import java.util.Objects;
import java.util.OptionalInt;

/** The fault that fired on a request, as the journal records it, and where it came from. */
public final class FaultRecord {
    private final String mode;
    private final String source;
    private final OptionalInt armedId;
    private final OptionalInt step;

    private FaultRecord(String mode, String source, OptionalInt armedId, OptionalInt step) {
        this.mode = mode;
        this.source = source;
        this.armedId = armedId;
        this.step = step;
    }

    static FaultRecord from(Members members) {
        return new FaultRecord(members.string("mode"), members.string("source"),
                members.optionalInteger("armedId"), members.optionalInteger("step"));
    }

    /** The mode's wire name ({@code "500"}, {@code "status"}; {@code "none"} for a sequence's step that let it through). */
    public String mode() {
        return mode;
    }

    /** Whether the fault that fired was {@code mode}. */
    public boolean is(FaultMode mode) {
        return this.mode.equals(mode.wireName());
    }

    /** {@code header}, {@code query}, {@code armed} or {@code rate-limit}. */
    public String source() {
        return source;
    }

    /** The armed fault's id, when it was one. */
    public OptionalInt armedId() {
        return armedId;
    }

    /** The step of its sequence, counted from 0, when it was one. */
    public OptionalInt step() {
        return step;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof FaultRecord)) {
            return false;
        }
        FaultRecord that = (FaultRecord) other;
        return mode.equals(that.mode) && source.equals(that.source) && armedId.equals(that.armedId)
                && step.equals(that.step);
    }

    @Override
    public int hashCode() {
        return Objects.hash(mode, source, armedId, step);
    }

    @Override
    public String toString() {
        return "FaultRecord{" + mode + " from " + source
                + (armedId.isPresent() ? " #" + armedId.getAsInt() : "")
                + (step.isPresent() ? " step " + step.getAsInt() : "") + "}";
    }
}
