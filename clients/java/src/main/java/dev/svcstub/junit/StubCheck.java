package dev.svcstub.junit;

/**
 * Whether a stub answers as svc-stub and is not older than this library; otherwise one line that
 * names it and says what to do.
 */
final class StubCheck {
    private StubCheck() {
    }

    /**
     * Checks the stub {@code client} talks to. {@code named} is how the line names it (the setting
     * and its URL, or the URL of a stub this run started); {@code setting} is the name of the
     * setting that gave it, or null for a stub this run started.
     */
    static void check(ControlClient client, String named, String setting) {
        String version;
        try {
            if (!client.healthy()) {
                throw new IllegalArgumentException("its /health does not say ok");
            }
            version = client.version();
        } catch (StubUnreachableException unreachable) {
            throw notTheStub(named, setting, unreachable.reason());
        } catch (StubRefusedException refused) {
            String problem = refused.status() + " from " + refused.call().substring(refused.call().indexOf(' ') + 1)
                    + ": " + refused.detail();
            if (refused.status() == 401) { // a stub started with --control-token
                throw new StubUnreachableException("svc-stub: " + named + " refuses its control calls (" + problem
                        + "); set SVC_STUB_CONTROL_TOKEN to its --control-token", problem);
            }
            throw notTheStub(named, setting, problem);
        } catch (IllegalArgumentException notTheDocument) {
            throw notTheStub(named, setting, notTheDocument.getMessage());
        }
        if (!Versions.recentEnough(version)) {
            throw new StubUnreachableException("svc-stub: " + named + " is svc-stub " + version
                    + ", older than this package (" + SvcStub.VERSION + "); upgrade it (pip install -U svc-stub)",
                    "version " + version);
        }
    }

    private static StubUnreachableException notTheStub(String named, String setting, String problem) {
        String advice = setting == null
                ? "its log says why"
                : "start one there (svc-stub --port PORT) or unset " + setting + " to have one started";
        return new StubUnreachableException("svc-stub: " + named + " does not answer as svc-stub (" + problem + "); " + advice,
                problem);
    }
}
