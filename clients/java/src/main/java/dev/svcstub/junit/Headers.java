package dev.svcstub.junit;

/**
 * The headers the stub reads on a client's request: the ones that fault that request alone,
 * and the one that names its namespace (for a client that keeps no base path). A test checks
 * each is in the stub's own description.
 */
public final class Headers {
    /** The fault mode for this request ({@link FaultMode#wireName()}). */
    public static final String FAULT = "X-Svc-Test-Fault";
    /** The delay for {@code delay} and {@code slow_body}, in ms. */
    public static final String DELAY_MS = "X-Svc-Test-Delay-Ms";
    /** The status for {@code status}. */
    public static final String STATUS = "X-Svc-Test-Status";
    /** The seconds in {@code Retry-After}. */
    public static final String RETRY_AFTER = "X-Svc-Test-Retry-After";
    /** The namespace to serve this request in. */
    public static final String NAMESPACE = "X-Svc-Test-Namespace";

    private Headers() {
    }
}
