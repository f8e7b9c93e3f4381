package dev.svcstub.junit;

/**
 * Something went wrong between the test and the stub (not in the code under test): its message
 * is one line that says what, and what to do.
 */
public class SvcStubException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SvcStubException(String message) {
        super(message);
    }

    public SvcStubException(String message, Throwable cause) {
        super(message, cause);
    }

    /**
     * This failure again, for another test that meets it: a new exception of the same kind with
     * the same message and this one as its cause, so each test's stack trace is its own and
     * the first failure's is kept beneath it.
     *
     * @return a fresh exception of this one's kind, caused by this one
     */
    SvcStubException again() {
        return new SvcStubException(getMessage(), this);
    }
}
