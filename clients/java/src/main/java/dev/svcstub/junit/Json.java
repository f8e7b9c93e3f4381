package dev.svcstub.junit;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * JSON as the stub's control plane speaks it, with no library: a test's classpath already has
 * the application's JSON library, often in a version of its own, and this one must not fight it.
 *
 * <p>The reader is strict (RFC 8259: no comments, trailing commas, leading zeros, bare control
 * characters or duplicate members) and bounded (text length and nesting), so a misbehaving server
 * gives a one-line error rather than a stack overflow or a wrong value. It reads objects as
 * insertion-ordered, unmodifiable {@code Map<String, Object>}, arrays as unmodifiable
 * {@code List<Object>}, integers as {@code Long} (or {@code BigInteger} past it), other numbers as
 * {@code Double}, and {@code null} as {@code null}.
 *
 * <p>The writer takes maps with string keys, collections and arrays, strings, numbers (finite),
 * booleans, {@code null}, {@link Optional}s and the helper's own enums (as their wire names).
 */
final class Json {

    /** The longest text {@link #parse} reads: far more than any control answer. */
    static final int MAX_LENGTH = 64 << 20;
    /** The deepest nesting {@link #parse} reads. */
    static final int MAX_DEPTH = 256;

    private Json() {
    }

    /** A text that is not JSON, or a value that cannot be written as JSON: says where and why. */
    static final class JsonException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        JsonException(String message) {
            super(message);
        }
    }

    // -- reading -------------------------------------------------------------------------------

    /** The value {@code text} holds; a {@link JsonException} if it is not exactly one JSON value. */
    static Object parse(String text) {
        if (text.length() > MAX_LENGTH) {
            throw new JsonException("JSON: " + text.length() + " characters, more than the " + MAX_LENGTH + " read");
        }
        Reader reader = new Reader(text);
        reader.skipWhitespace();
        Object value = reader.value(0);
        reader.skipWhitespace();
        if (!reader.atEnd()) {
            throw reader.error("more after the value");
        }
        return value;
    }

    /** The object {@code text} holds; a {@link JsonException} if it holds anything else. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> parseObject(String text) {
        Object value = parse(text);
        if (!(value instanceof Map)) {
            throw new JsonException("JSON: expected an object, got " + kind(value));
        }
        return (Map<String, Object>) value;
    }

    private static String kind(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof List) {
            return "an array";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        return "a number";
    }

    private static final class Reader {
        private final String text;
        private int at;

        Reader(String text) {
            this.text = text;
        }

        boolean atEnd() {
            return at >= text.length();
        }

        JsonException error(String what) {
            return new JsonException("JSON: " + what + " at offset " + at);
        }

        void skipWhitespace() {
            while (at < text.length()) {
                char c = text.charAt(at);
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                    return;
                }
                at++;
            }
        }

        Object value(int depth) {
            if (atEnd()) {
                throw error("unexpected end");
            }
            char c = text.charAt(at);
            switch (c) {
                case '{':
                    return object(depth + 1);
                case '[':
                    return array(depth + 1);
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw error("unexpected '" + printable(c) + "'");
            }
        }

        private Object literal(String word, Object value) {
            if (!text.startsWith(word, at)) {
                throw error("expected " + word);
            }
            at += word.length();
            return value;
        }

        private Map<String, Object> object(int depth) {
            checkDepth(depth);
            at++; // {
            Map<String, Object> members = new LinkedHashMap<>();
            skipWhitespace();
            if (peek('}')) {
                at++;
                return Collections.unmodifiableMap(members);
            }
            while (true) {
                skipWhitespace();
                if (!peek('"')) {
                    throw error("expected a member name");
                }
                int nameAt = at;
                String name = string();
                if (members.containsKey(name)) {
                    at = nameAt;
                    throw error("duplicate member \"" + name + "\"");
                }
                skipWhitespace();
                expect(':');
                skipWhitespace();
                members.put(name, value(depth));
                skipWhitespace();
                if (peek('}')) {
                    at++;
                    return Collections.unmodifiableMap(members);
                }
                expect(',');
            }
        }

        private List<Object> array(int depth) {
            checkDepth(depth);
            at++; // [
            List<Object> items = new ArrayList<>();
            skipWhitespace();
            if (peek(']')) {
                at++;
                return Collections.unmodifiableList(items);
            }
            while (true) {
                skipWhitespace();
                items.add(value(depth));
                skipWhitespace();
                if (peek(']')) {
                    at++;
                    return Collections.unmodifiableList(items);
                }
                expect(',');
            }
        }

        private void checkDepth(int depth) {
            if (depth > MAX_DEPTH) {
                throw error("nested deeper than " + MAX_DEPTH);
            }
        }

        private String string() {
            at++; // "
            StringBuilder out = new StringBuilder();
            while (true) {
                if (atEnd()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(at);
                if (c == '"') {
                    at++;
                    return out.toString();
                }
                if (c < 0x20) {
                    throw error("control character in a string");
                }
                if (c != '\\') {
                    out.append(c);
                    at++;
                    continue;
                }
                at++;
                if (atEnd()) {
                    throw error("unterminated escape");
                }
                char escaped = text.charAt(at++);
                switch (escaped) {
                    case '"':
                    case '\\':
                    case '/':
                        out.append(escaped);
                        break;
                    case 'b':
                        out.append('\b');
                        break;
                    case 'f':
                        out.append('\f');
                        break;
                    case 'n':
                        out.append('\n');
                        break;
                    case 'r':
                        out.append('\r');
                        break;
                    case 't':
                        out.append('\t');
                        break;
                    case 'u':
                        out.append(unicodeEscape());
                        break;
                    default:
                        at--;
                        throw error("bad escape '\\" + printable(escaped) + "'");
                }
            }
        }

        private char unicodeEscape() {
            if (at + 4 > text.length()) {
                throw error("short \\u escape");
            }
            int code = 0;
            for (int i = 0; i < 4; i++) {
                int digit = Character.digit(text.charAt(at + i), 16);
                if (digit < 0) {
                    throw error("bad \\u escape");
                }
                code = code * 16 + digit;
            }
            at += 4;
            return (char) code;
        }

        private Object number() {
            int start = at;
            if (peek('-')) {
                at++;
            }
            if (peek('0')) {
                at++;
            } else if (digitHere()) {
                digits();
            } else {
                throw error("expected a digit");
            }
            boolean integral = true;
            if (peek('.')) {
                integral = false;
                at++;
                if (!digitHere()) {
                    throw error("expected a digit after '.'");
                }
                digits();
            }
            if (peek('e') || peek('E')) {
                integral = false;
                at++;
                if (peek('+') || peek('-')) {
                    at++;
                }
                if (!digitHere()) {
                    throw error("expected a digit in the exponent");
                }
                digits();
            }
            if (digitHere()) {
                throw error("leading zero");
            }
            String literal = text.substring(start, at);
            if (!integral) {
                double value = Double.parseDouble(literal);
                if (Double.isInfinite(value)) {
                    at = start;
                    throw error("number out of range");
                }
                return value;
            }
            BigInteger value = new BigInteger(literal);
            return value.bitLength() < 64 ? (Object) value.longValue() : value;
        }

        private void digits() {
            while (digitHere()) {
                at++;
            }
        }

        private boolean digitHere() {
            return !atEnd() && text.charAt(at) >= '0' && text.charAt(at) <= '9';
        }

        private boolean peek(char c) {
            return !atEnd() && text.charAt(at) == c;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw error(atEnd() ? "expected '" + c + "', got the end" : "expected '" + c + "'");
            }
            at++;
        }

        private static String printable(char c) {
            return c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c);
        }
    }

    // -- writing -------------------------------------------------------------------------------

    /** {@code value} as compact JSON. */
    static String write(Object value) {
        StringBuilder out = new StringBuilder();
        new Writer(out, null).value(value, 0);
        return out.toString();
    }

    /** {@code value} as JSON indented by two spaces, for a failure message. */
    static String pretty(Object value) {
        StringBuilder out = new StringBuilder();
        new Writer(out, "  ").value(value, 0);
        return out.toString();
    }

    private static final class Writer {
        private final StringBuilder out;
        private final String indent;

        Writer(StringBuilder out, String indent) {
            this.out = out;
            this.indent = indent;
        }

        void value(Object value, int depth) {
            if (depth > MAX_DEPTH) {
                throw new JsonException("JSON: nested deeper than " + MAX_DEPTH + " (a cycle?)");
            }
            if (value == null) {
                out.append("null");
            } else if (value instanceof String) {
                string((String) value);
            } else if (value instanceof Boolean) {
                out.append(value);
            } else if (value instanceof Number) {
                number((Number) value);
            } else if (value instanceof WireName) {
                string(((WireName) value).wireName());
            } else if (value instanceof Map) {
                object((Map<?, ?>) value, depth);
            } else if (value instanceof Collection) {
                array(((Collection<?>) value).toArray(), depth);
            } else if (value instanceof Object[]) {
                array((Object[]) value, depth);
            } else if (value instanceof Optional) {
                value(((Optional<?>) value).orElse(null), depth);
            } else {
                throw new JsonException("JSON: cannot write a " + value.getClass().getName()
                        + " (use maps, lists, strings, numbers, booleans and null)");
            }
        }

        private void number(Number number) {
            if (number instanceof Double || number instanceof Float) {
                double d = number.doubleValue();
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    throw new JsonException("JSON: " + d + " is not a JSON number");
                }
                // Java's own spelling is JSON's (1.5, 25.0, 1.0E-5): a float stays a float.
                out.append(number instanceof Float ? Float.toString(number.floatValue()) : Double.toString(d));
            } else if (number instanceof BigDecimal) {
                out.append(((BigDecimal) number).toString());
            } else if (number instanceof Long || number instanceof Integer || number instanceof Short
                    || number instanceof Byte || number instanceof BigInteger) {
                out.append(number);
            } else {
                throw new JsonException("JSON: cannot write a " + number.getClass().getName());
            }
        }

        private void object(Map<?, ?> members, int depth) {
            if (members.isEmpty()) {
                out.append("{}");
                return;
            }
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> member : members.entrySet()) {
                if (!(member.getKey() instanceof String)) {
                    throw new JsonException("JSON: a member name must be a string, not " + member.getKey());
                }
                if (!first) {
                    out.append(',');
                }
                first = false;
                newline(depth + 1);
                string((String) member.getKey());
                out.append(indent == null ? ":" : ": ");
                value(member.getValue(), depth + 1);
            }
            newline(depth);
            out.append('}');
        }

        private void array(Object[] items, int depth) {
            if (items.length == 0) {
                out.append("[]");
                return;
            }
            out.append('[');
            for (int i = 0; i < items.length; i++) {
                if (i > 0) {
                    out.append(',');
                }
                newline(depth + 1);
                value(items[i], depth + 1);
            }
            newline(depth);
            out.append(']');
        }

        private void newline(int depth) {
            if (indent != null) {
                out.append('\n');
                for (int i = 0; i < depth; i++) {
                    out.append(indent);
                }
            }
        }

        private void string(String s) {
            out.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"':
                        out.append("\\\"");
                        break;
                    case '\\':
                        out.append("\\\\");
                        break;
                    case '\n':
                        out.append("\\n");
                        break;
                    case '\r':
                        out.append("\\r");
                        break;
                    case '\t':
                        out.append("\\t");
                        break;
                    case '\b':
                        out.append("\\b");
                        break;
                    case '\f':
                        out.append("\\f");
                        break;
                    default:
                        if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                }
            }
            out.append('"');
        }
    }
}
