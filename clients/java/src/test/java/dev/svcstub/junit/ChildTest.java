package dev.svcstub.junit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class another test runs in a launcher of its own ({@link Launch}), to read what it
 * reports: it fails on purpose, or needs settings of its own. Anywhere else (an IDE running the
 * package) it is skipped.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
@ExtendWith(ChildTest.RunByParentOnly.class)
@interface ChildTest {

    /** The configuration parameter {@link Launch} sets. */
    String PARAMETER = "svcstub.test.child";

    final class RunByParentOnly implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return context.getConfigurationParameter(PARAMETER).isPresent()
                    ? ConditionEvaluationResult.enabled("run by its parent test")
                    : ConditionEvaluationResult.disabled("run by its parent test only");
        }
    }
}
