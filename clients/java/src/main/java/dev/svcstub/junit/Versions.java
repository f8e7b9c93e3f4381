package dev.svcstub.junit;

/** Which stubs are recent enough for this library: its own version or later, numerically. */
final class Versions {
    private Versions() {
    }

    static boolean recentEnough(String version) {
        String[] have = version.split("[.+-]", -1);
        String[] need = SvcStub.VERSION.split("\\.");
        for (int i = 0; i < 3; i++) {
            int a;
            try {
                a = i < have.length ? Integer.parseInt(have[i]) : 0;
            } catch (NumberFormatException notANumber) {
                return false;
            }
            int b = Integer.parseInt(need[i]);
            if (a != b) {
                return a > b;
            }
        }
        return true;
    }
}
