package dev.svcstub.junit;

import java.util.List;
import org.opentest4j.AssertionFailedError;

/**
 * A wait on the journal ran out before what it waited for arrived. It is an assertion failure
 * (the code under test did not send it in time), and its message shows what did arrive.
 */
public final class WaitTimeoutError extends AssertionFailedError {
    private static final long serialVersionUID = 1L;

    private final transient List<?> arrived;

    WaitTimeoutError(String message, List<?> arrived) {
        super(message);
        this.arrived = List.copyOf(arrived);
    }

    /** What did arrive: the events, or the requests, recorded when the wait ran out. */
    public List<?> arrived() {
        return arrived;
    }
}
