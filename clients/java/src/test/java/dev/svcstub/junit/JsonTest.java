package dev.svcstub.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The library's JSON: strict and bounded reading, exact writing. */
class JsonTest {

    @Test
    void readsEveryKindOfValue() {
        Map<String, Object> read = Json.parseObject(
                " {\"s\": \"a\\\"b\\\\c\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\", \"i\": -12, \"big\": 123456789012345678901234567890,"
                        + " \"d\": 1.5e3, \"t\": true, \"f\": false, \"n\": null, \"a\": [1, [], {}], \"o\": {\"x\": 0}}\n");
        assertEquals("a\"b\\c/\b\f\n\r\té😀", read.get("s"));
        assertEquals(-12L, read.get("i"));
        assertEquals(new BigInteger("123456789012345678901234567890"), read.get("big"));
        assertEquals(1500.0, read.get("d"));
        assertEquals(true, read.get("t"));
        assertEquals(false, read.get("f"));
        assertNull(read.get("n"));
        assertEquals(true, read.containsKey("n"));
        assertEquals(List.of(1L, List.of(), Map.of()), read.get("a"));
        assertEquals(Map.of("x", 0L), read.get("o"));
        assertEquals(List.of("s", "i", "big", "d", "t", "f", "n", "a", "o"), List.copyOf(read.keySet()), "in the order sent");
    }

    @Test
    void whatItReadsCannotBeChanged() {
        Map<String, Object> read = Json.parseObject("{\"a\": [1]}");
        assertThrows(UnsupportedOperationException.class, () -> read.put("b", 2));
        @SuppressWarnings("unchecked")
        List<Object> list = (List<Object>) read.get("a");
        assertThrows(UnsupportedOperationException.class, () -> list.add(2));
    }

    static Stream<Arguments> notJson() {
        return Stream.of(
            Arguments.of("", "JSON: unexpected end at offset 0"),
            Arguments.of("{", "JSON: expected a member name at offset 1"),
            Arguments.of("{\"a\" 1}", "JSON: expected ':' at offset 5"),
            Arguments.of("{\"a\": 1,}", "JSON: expected a member name at offset 8"),
            Arguments.of("[1,]", "JSON: unexpected ']' at offset 3"),
            Arguments.of("[1 2]", "JSON: expected ',' at offset 3"),
            Arguments.of("{\"a\": 1, \"a\": 2}", "JSON: duplicate member \"a\" at offset 9"),
            Arguments.of("01", "JSON: leading zero at offset 1"),
            Arguments.of("-", "JSON: expected a digit at offset 1"),
            Arguments.of("1.", "JSON: expected a digit after '.' at offset 2"),
            Arguments.of("1e", "JSON: expected a digit in the exponent at offset 2"),
            Arguments.of("+1", "JSON: unexpected '+' at offset 0"),
            Arguments.of("1e999", "JSON: number out of range at offset 0"),
            Arguments.of("\"a", "JSON: unterminated string at offset 2"),
            Arguments.of("\"\\x\"", "JSON: bad escape '\\x' at offset 2"),
            Arguments.of("\"\\u12g4\"", "JSON: bad \\u escape at offset 3"),
            Arguments.of("tru", "JSON: expected true at offset 0"),
            Arguments.of("nul", "JSON: expected null at offset 0"),
            Arguments.of("NaN", "JSON: unexpected 'N' at offset 0"),
            Arguments.of("// c\n1", "JSON: unexpected '/' at offset 0"),
            Arguments.of("1 2", "JSON: more after the value at offset 2"),
            Arguments.of("'a'", "JSON: unexpected ''' at offset 0"));
    }

    @ParameterizedTest
    @MethodSource("notJson")
    void rejectsWhatIsNotJsonWithWhereAndWhy(String text, String message) {
        assertEquals(message, assertThrows(Json.JsonException.class, () -> Json.parse(text)).getMessage());
    }

    @Test
    void rejectsAControlCharacterInAString() {
        assertEquals("JSON: control character in a string at offset 2",
                assertThrows(Json.JsonException.class, () -> Json.parse("\"a\nb\"")).getMessage());
    }

    @Test
    void isBoundedInDepthAndLength() {
        String deep = "[".repeat(Json.MAX_DEPTH + 1) + "]".repeat(Json.MAX_DEPTH + 1);
        assertEquals("JSON: nested deeper than 256 at offset 256",
                assertThrows(Json.JsonException.class, () -> Json.parse(deep)).getMessage());
        String deepEnough = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
        Json.parse(deepEnough);
        char[] huge = new char[Json.MAX_LENGTH + 1];
        Arrays.fill(huge, ' ');
        assertEquals("JSON: 67108865 characters, more than the 67108864 read",
                assertThrows(Json.JsonException.class, () -> Json.parse(new String(huge))).getMessage());
    }

    @Test
    void parseObjectWantsAnObject() {
        assertEquals("JSON: expected an object, got an array",
                assertThrows(Json.JsonException.class, () -> Json.parseObject("[]")).getMessage());
        assertEquals("JSON: expected an object, got null",
                assertThrows(Json.JsonException.class, () -> Json.parseObject("null")).getMessage());
    }

    @Test
    void writesCompactlyAndInOrder() {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("mode", FaultMode.HTTP_500);
        document.put("applyTo", List.of(Selector.EVALUATE, Selector.CONTROL_POINTS));
        document.put("int", 3);
        document.put("long", 1L << 40);
        document.put("double", 0.15);
        document.put("float", 2.5f);
        document.put("whole", 25.0);
        document.put("big", new BigDecimal("1.10"));
        document.put("null", null);
        document.put("absent", Optional.empty());
        document.put("array", new Object[] {"a", true});
        document.put("text", "quote \" backslash \\ newline \n tab \t nul \u0000 line-sep \u2028 é");
        assertEquals("{\"mode\":\"500\",\"applyTo\":[\"evaluate\",\"control-points\"],\"int\":3,\"long\":1099511627776,"
                + "\"double\":0.15,\"float\":2.5,\"whole\":25.0,\"big\":1.10,\"null\":null,\"absent\":null,\"array\":[\"a\",true],"
                + "\"text\":\"quote \\\" backslash \\\\ newline \\n tab \\t nul \\u0000 line-sep \\u2028 é\"}",
                Json.write(document));
    }

    @Test
    void writesPrettilyForFailureMessages() {
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("flagKey", "checkout-v2");
        event.put("empty", List.of());
        assertEquals("[\n  {\n    \"flagKey\": \"checkout-v2\",\n    \"empty\": []\n  }\n]", Json.pretty(List.of(event)));
    }

    @ParameterizedTest
    @ValueSource(doubles = {Double.NaN, Double.POSITIVE_INFINITY})
    void refusesWhatJsonCannotSay(double number) {
        assertThrows(Json.JsonException.class, () -> Json.write(number));
    }

    @Test
    void refusesOtherTypesAndNonStringKeys() {
        assertEquals("JSON: cannot write a java.time.Duration (use maps, lists, strings, numbers, booleans and null)",
                assertThrows(Json.JsonException.class, () -> Json.write(java.time.Duration.ZERO)).getMessage());
        assertEquals("JSON: a member name must be a string, not 1",
                assertThrows(Json.JsonException.class, () -> Json.write(Map.of(1, "a"))).getMessage());
        List<Object> cycle = new java.util.ArrayList<>();
        cycle.add(cycle);
        assertThrows(Json.JsonException.class, () -> Json.write(cycle));
    }

    @Test
    void roundTrips() {
        String text = "{\"a\":[1,2.5,\"x\",null,true,{\"b\":{}}],\"c\":\"\\u0001\"}";
        assertEquals(text, Json.write(Json.parse(text)));
    }
}
