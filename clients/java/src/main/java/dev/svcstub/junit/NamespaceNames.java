package dev.svcstub.junit;

import java.security.SecureRandom;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test's namespace name: readable in the stub's namespace list and inspector
 * ({@code CheckoutTest.fallsBack}), and unique across tests, parallel threads and runs sharing
 * one stub (a random suffix); at most 64 characters of {@code A-Z a-z 0-9 . _ -}.
 */
final class NamespaceNames {
    static final int READABLE_LENGTH = 55;
    private static final Pattern UNSAFE = Pattern.compile("[^A-Za-z0-9._-]+");
    private static final Pattern DASHES = Pattern.compile("-{2,}");
    private static final Pattern TRIMMED_START = Pattern.compile("^[-._]+");
    private static final Pattern TRIMMED_END = Pattern.compile("[-._]+$");
    private static final SecureRandom RANDOM = new SecureRandom();

    private NamespaceNames() {
    }

    /** A new name for the namespace of the test (or class) {@code context} is. */
    static String of(ExtensionContext context) {
        return of(readableName(context), invocationOf(context));
    }

    /** {@code name} made safe and cut to 55 characters, then a dash and 8 random hex digits. */
    static String of(String name) {
        return of(name, "");
    }

    /**
     * {@code name} and then {@code invocation} (a repetition's or parameterized invocation's
     * display name, which tells it from its siblings), made safe; when that is too long, the
     * name is cut rather than the invocation (of which 20 characters are kept).
     */
    static String of(String name, String invocation) {
        String suffix = safe(invocation);
        if (suffix.length() > 20) {
            suffix = trimEnd(suffix.substring(0, 20));
        }
        String readable = safe(name);
        int room = suffix.isEmpty() ? READABLE_LENGTH : READABLE_LENGTH - 1 - suffix.length();
        if (readable.length() > room) {
            readable = trimEnd(readable.substring(0, room));
        }
        if (!suffix.isEmpty()) {
            readable = readable.isEmpty() ? suffix : readable + "-" + suffix;
        }
        if (readable.isEmpty()) {
            readable = "test";
        }
        return readable + "-" + String.format("%08x", RANDOM.nextInt());
    }

    private static String safe(String text) {
        return trimEnd(TRIMMED_START.matcher(DASHES.matcher(UNSAFE.matcher(text).replaceAll("-")).replaceAll("-"))
                .replaceAll(""));
    }

    private static String trimEnd(String text) {
        return TRIMMED_END.matcher(text).replaceAll("");
    }

    /**
     * The test as a person names it: {@code Class.method}, or for a class-wide context (a
     * {@code @BeforeAll} parameter) the class.
     */
    static String readableName(ExtensionContext context) {
        String className = context.getTestClass().map(Class::getSimpleName).orElse("");
        if (context.getTestMethod().isEmpty()) {
            return className.isEmpty() ? context.getDisplayName() : className;
        }
        return className + "." + context.getTestMethod().get().getName();
    }

    /** A repetition's or parameterized invocation's display name ({@code [2] HTTP_500}); "" for a plain test. */
    static String invocationOf(ExtensionContext context) {
        boolean invocation = context.getTestMethod().isPresent()
                && context.getParent().flatMap(ExtensionContext::getTestMethod).isPresent();
        return invocation ? context.getDisplayName() : "";
    }
}
