package dev.svcstub.junit;

/** A stub could not be started: no {@code svc-stub} to run, or it stopped before it was ready. */
public final class StubStartException extends SvcStubException {
    private static final long serialVersionUID = 1L;

    StubStartException(String message) {
        super(message);
    }

    private StubStartException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    StubStartException again() {
        return new StubStartException(getMessage(), this);
    }
}
