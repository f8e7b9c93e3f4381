package dev.svcstub.junit;

/** The stub refused a control call: its status, its error code and its message. */
public final class StubRefusedException extends SvcStubException {
    private static final long serialVersionUID = 1L;

    private final String call;
    private final int status;
    private final String code;
    private final String detail;

    StubRefusedException(String call, int status, String code, String detail) {
        super("svc-stub: " + call + ": " + status + " " + code + ": " + detail
                + (status == 401 ? "; set SVC_STUB_CONTROL_TOKEN to the stub's --control-token" : ""));
        this.call = call;
        this.status = status;
        this.code = code;
        this.detail = detail;
    }

    private StubRefusedException(StubRefusedException first) {
        super(first.getMessage(), first);
        this.call = first.call;
        this.status = first.status;
        this.code = first.code;
        this.detail = first.detail;
    }

    @Override
    StubRefusedException again() {
        return new StubRefusedException(this);
    }

    /** The call it refused: its method and path ({@code POST /_test/fault}). */
    public String call() {
        return call;
    }

    /** The HTTP status of the refusal (400 for a bad document, 404 for a fault or namespace that is gone). */
    public int status() {
        return status;
    }

    /** The stub's error code ({@code INVALID_BODY}, {@code NOT_FOUND}). */
    public String code() {
        return code;
    }

    /** The stub's message, as it said it. */
    public String detail() {
        return detail;
    }
}
