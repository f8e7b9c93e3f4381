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
}
