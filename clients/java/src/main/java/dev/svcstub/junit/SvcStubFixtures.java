package dev.svcstub.junit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a test's namespace serves from its start, on a test method or a test class (every test
 * of it; a method's own annotation wins over its class's). It registers
 * {@link SvcStubExtension} too.
 *
 * <pre>{@code
 * @Test
 * @SvcStubFixtures("beta.yaml")
 * void showsTheBanner(SvcStub stub) { ... }
 * }</pre>
 *
 * <p>Each fixture is a classpath resource found as {@link Class#getResource} finds it from the
 * test class (beside it in its package, or from the root with a leading {@code /}), else a file
 * path (relative to the working directory); YAML or JSON. The first replaces the served set, later
 * ones overlay it key by key.
 */
@Documented
@Inherited
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(SvcStubExtension.class)
public @interface SvcStubFixtures {

    /** The fixture files. */
    String[] value() default {};

    /**
     * Keys bound to the namespace: requests that name no namespace but present one of these are
     * served in it, for a client that keeps no base path and cannot add a header. A key binds to
     * one namespace at a time: tests that may run at once need keys of their own.
     */
    String[] keys() default {};
}
