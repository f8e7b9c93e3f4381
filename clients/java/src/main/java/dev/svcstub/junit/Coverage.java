package dev.svcstub.junit;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import org.opentest4j.AssertionFailedError;

/**
 * What the tests exercised: the stub's coverage report ({@code GET /_test/coverage}), each route
 * the clients called against each outcome they were served, held against each profile of what a
 * kind of client is expected to meet ({@code runtime}: the spec's error kinds on evaluate and
 * capture), its gaps in words; the fixture flags read and never read; and the summary the stub
 * words for a run's end.
 *
 * <pre>{@code
 * @Test
 * void theSuiteMeetsTheRuntimeProfile(SvcStub stub) {
 *     stub.coverage().assertCovers("runtime", 80);
 * }
 * }</pre>
 *
 * <p>At the end of the run the extension prints the run's {@link #summary()}, as the stub words
 * it, and writes the full report, {@code coverage.json}, where the run's journals go
 * ({@code target/svc-stub-journal}).
 *
 * @param scope    {@code run} (every namespace's counts, deleted ones' too) or {@code namespace}
 * @param cells    each route against each outcome met, and how often
 * @param profiles each profile by name
 * @param flags    the fixture flags requests were answered, and those never read
 * @param summary  the coverage short, in the stub's words, a line each, as the run's end prints it
 *                 ({@code svc-stub coverage: runtime 2 of 15 cells met; gaps: ...}, then
 *                 {@code svc-stub coverage: fixture flags read 1 of 9; never read: ...})
 */
public record Coverage(String scope, List<Cell> cells, Map<String, Profile> profiles, Flags flags, List<String> summary) {
    /** The file the run's end writes the report to, in the journals' directory. */
    public static final String FILE = "coverage.json";

    /** The report's lists and map, unmodifiable. */
    public Coverage {
        Objects.requireNonNull(scope, "scope");
        Objects.requireNonNull(flags, "flags");
        cells = List.copyOf(cells);
        profiles = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(profiles));
        summary = List.copyOf(summary);
    }

    /**
     * One route against one outcome it was served, and how often.
     *
     * @param route   the route's name ({@code evaluate})
     * @param outcome {@code ok}, a refusal ({@code 401}), a fault ({@code fault 500}), {@code rate limited}
     * @param count   how many requests met it
     */
    public record Cell(String route, String outcome, long count) {
    }

    /**
     * The fixture flags requests were answered (evaluate's decisions, {@code /flags}, the
     * definitions poll), and those of the fixtures no request read.
     *
     * @param read      the flags read, by name
     * @param neverRead the fixtures' flags never read, by name
     * @param of        how many flags the fixtures hold
     */
    public record Flags(List<String> read, List<String> neverRead, int of) {
        /** The names, unmodifiable. */
        public Flags {
            read = List.copyOf(read);
            neverRead = List.copyOf(neverRead);
        }
    }

    /**
     * A cell a profile expects that nothing met.
     *
     * @param route    the route's name
     * @param expected the outcomes any of which would have met it
     * @param says     the gap in words ({@code evaluate never met a 429 with Retry-After})
     */
    public record Gap(String route, List<String> expected, String says) {
        /** The outcomes, unmodifiable. */
        public Gap {
            expected = List.copyOf(expected);
        }
    }

    /**
     * A profile held against the cells met.
     *
     * @param name        its name ({@code runtime})
     * @param description what kind of client it is for
     * @param met         how many of its cells were met
     * @param of          how many cells it has
     * @param gaps        the ones not met
     */
    public record Profile(String name, String description, int met, int of, List<Gap> gaps) {
        /** The gaps, unmodifiable. */
        public Profile {
            gaps = List.copyOf(gaps);
        }

        /**
         * The share of its cells met.
         *
         * @return a percentage, 100 for a profile of no cells
         */
        public double percent() {
            return of == 0 ? 100 : 100.0 * met / of;
        }
    }

    /**
     * Reads a saved report (the text of {@code coverage.json}, or of {@code GET /_test/coverage}).
     *
     * @param json the report's text
     * @return the report
     * @throws IllegalArgumentException if it is not one
     */
    public static Coverage parse(String json) {
        return of(Members.of(Json.parse(json)));
    }

    static Coverage of(Members answer) {
        List<Cell> cells = answer.objects("cells").stream()
                .map(cell -> new Cell(cell.string("route"), cell.string("outcome"), (long) cell.number("count"))).toList();
        Map<String, Profile> profiles = new LinkedHashMap<>();
        for (Map.Entry<String, Object> entry : answer.object("profiles").asMap().entrySet()) {
            Members profile = Members.of(entry.getValue());
            List<Gap> gaps = profile.objects("gaps").stream()
                    .map(gap -> new Gap(gap.string("route"), gap.strings("expected"), gap.string("says"))).toList();
            profiles.put(entry.getKey(), new Profile(profile.optionalString("name").orElse(entry.getKey()),
                    profile.optionalString("description").orElse(""), profile.integer("met"), profile.integer("of"), gaps));
        }
        Members flags = answer.object("flags");
        if (!answer.has("summary")) {
            throw new IllegalArgumentException("'summary' is missing; expected an array of strings");
        }
        return new Coverage(answer.string("scope"), cells, profiles,
                new Flags(flags.strings("read"), flags.strings("neverRead"), flags.integer("of")), answer.strings("summary"));
    }

    /**
     * The profile named.
     *
     * @param name its name ({@code runtime})
     * @return the profile
     * @throws IllegalArgumentException if the report has none of that name
     */
    public Profile profile(String name) {
        Profile profile = profiles.get(name);
        if (profile == null) {
            throw new IllegalArgumentException("svc-stub coverage: no profile '" + name + "' in the report (it has "
                    + (profiles.isEmpty() ? "none" : String.join(", ", profiles.keySet())) + ")");
        }
        return profile;
    }

    /**
     * A gate: asserts at least {@code atLeastPercent} of {@code profile}'s cells were met.
     *
     * @param profile        the profile's name ({@code runtime})
     * @param atLeastPercent the share required, 0 to 100 (100: every cell)
     * @throws AssertionFailedError naming the share and every gap, if under it
     */
    public void assertCovers(String profile, double atLeastPercent) {
        if (!(atLeastPercent >= 0 && atLeastPercent <= 100)) {
            throw new IllegalArgumentException("assertCovers: atLeastPercent is from 0 to 100, not " + atLeastPercent);
        }
        Profile held = profile(profile);
        if (held.percent() >= atLeastPercent) {
            return;
        }
        throw new AssertionFailedError(String.format(java.util.Locale.ROOT, "svc-stub coverage: %s %d of %d cells met (%.1f %%), under %s %%; gaps:%n%s",
                profile, held.met(), held.of(), held.percent(), atLeastPercent == Math.rint(atLeastPercent) ? Long.toString((long) atLeastPercent) : Double.toString(atLeastPercent),
                held.gaps().stream().map(gap -> "  - " + gap.says()).collect(Collectors.joining(System.lineSeparator()))),
                atLeastPercent, held.percent());
    }

    /**
     * A gate: asserts every cell of {@code profile} was met.
     *
     * @param profile the profile's name
     * @throws AssertionFailedError naming every gap, if one is left
     */
    public void assertCovers(String profile) {
        assertCovers(profile, 100);
    }
}
