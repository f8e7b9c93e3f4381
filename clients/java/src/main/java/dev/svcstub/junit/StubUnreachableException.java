package dev.svcstub.junit;

/** Nothing answers at the stub's URL, or something other than svc-stub does. */
public final class StubUnreachableException extends SvcStubException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    StubUnreachableException(String message, String reason) {
        super(message);
        this.reason = reason;
    }

    private StubUnreachableException(StubUnreachableException first) {
        super(first.getMessage(), first);
        this.reason = first.reason;
    }

    @Override
    StubUnreachableException again() {
        return new StubUnreachableException(this);
    }

    /** Why, in a few words ({@code connection refused}, {@code no answer in time}). */
    public String reason() {
        return reason;
    }
}
