package dev.svcstub.junit;

/** Nothing answers at the stub's URL, or something other than svc-stub does. */
public final class StubUnreachableException extends SvcStubException {
    private static final long serialVersionUID = 1L;

    private final String reason;

    StubUnreachableException(String message, String reason) {
        super(message);
        this.reason = reason;
    }

    /** Why, in a few words ({@code connection refused}, {@code no answer in time}). */
    public String reason() {
        return reason;
    }
}
