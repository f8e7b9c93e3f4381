package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The one rule of which stub versions a helper accepts (clients/compatibility.json), every case of it. */
class CompatibilityTest {
    static final Path COMPATIBILITY = Path.of("../compatibility.json");

    static Stream<Arguments> cases() throws IOException {
        List<Members> cases = Members.of(Json.parse(Files.readString(COMPATIBILITY, StandardCharsets.UTF_8))).objects("cases");
        assertTrue(!cases.isEmpty(), "clients/compatibility.json has no cases");
        return cases.stream().map(each -> Arguments.of(each.string("stub"), each.string("helper"), each.bool("compatible")));
    }

    @ParameterizedTest(name = "stub {0}, helper {1}: {2}")
    @MethodSource("cases")
    void aHelperAcceptsAStubByTheSharedRule(String stub, String helper, boolean compatible) {
        assertEquals(compatible, RunStub.compatible(stub, helper), () -> "stub " + stub + " with helper " + helper);
    }
}
