package dev.svcstub.junit;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.stream.Collectors;

/**
 * Typed reads of one JSON object the stub sent. A member of another type than the stub's
 * document says is an {@link IllegalArgumentException} naming it: the stub and this helper
 * disagree, which the caller reports as a stub that does not answer as svc-stub.
 */
final class Members {
    private final Map<String, Object> members;

    private Members(Map<String, Object> members) {
        this.members = members;
    }

    @SuppressWarnings("unchecked")
    static Members of(Object value) {
        if (!(value instanceof Map)) {
            throw new IllegalArgumentException("expected an object, got " + value);
        }
        return new Members((Map<String, Object>) value);
    }

    Map<String, Object> asMap() {
        return members;
    }

    boolean has(String name) {
        return members.get(name) != null;
    }

    Object raw(String name) {
        return members.get(name);
    }

    String string(String name) {
        return optionalString(name).orElseThrow(() -> missing(name, "a string"));
    }

    Optional<String> optionalString(String name) {
        Object value = members.get(name);
        if (value == null) {
            return Optional.empty();
        }
        if (!(value instanceof String)) {
            throw wrong(name, "a string", value);
        }
        return Optional.of((String) value);
    }

    int integer(String name) {
        OptionalInt value = optionalInteger(name);
        if (value.isEmpty()) {
            throw missing(name, "an integer");
        }
        return value.getAsInt();
    }

    OptionalInt optionalInteger(String name) {
        Object value = members.get(name);
        if (value == null) {
            return OptionalInt.empty();
        }
        if (!(value instanceof Long) || (Long) value != ((Long) value).intValue()) {
            throw wrong(name, "an integer", value);
        }
        return OptionalInt.of(((Long) value).intValue());
    }

    double number(String name) {
        Object value = members.get(name);
        if (!(value instanceof Number)) {
            throw value == null ? missing(name, "a number") : wrong(name, "a number", value);
        }
        return ((Number) value).doubleValue();
    }

    boolean bool(String name) {
        Object value = members.get(name);
        if (value == null) {
            return false;
        }
        if (!(value instanceof Boolean)) {
            throw wrong(name, "a boolean", value);
        }
        return (Boolean) value;
    }

    Optional<Members> optionalObject(String name) {
        Object value = members.get(name);
        return value == null ? Optional.empty() : Optional.of(of(value));
    }

    Members object(String name) {
        return optionalObject(name).orElseThrow(() -> missing(name, "an object"));
    }

    List<Object> list(String name) {
        Object value = members.get(name);
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List)) {
            throw wrong(name, "an array", value);
        }
        @SuppressWarnings("unchecked")
        List<Object> list = (List<Object>) value;
        return list;
    }

    List<Members> objects(String name) {
        return list(name).stream().map(Members::of).collect(Collectors.toUnmodifiableList());
    }

    List<String> strings(String name) {
        return list(name).stream().map(item -> {
            if (!(item instanceof String)) {
                throw wrong(name, "an array of strings", item);
            }
            return (String) item;
        }).collect(Collectors.toUnmodifiableList());
    }

    /** A map of strings ({@code headers}): each value as the stub sent it. */
    Map<String, String> stringMap(String name) {
        Optional<Members> object = optionalObject(name);
        if (object.isEmpty()) {
            return Map.of();
        }
        return object.get().members.entrySet().stream().collect(Collectors.toUnmodifiableMap(
                Map.Entry::getKey, entry -> String.valueOf(entry.getValue())));
    }

    private static IllegalArgumentException missing(String name, String what) {
        return new IllegalArgumentException("'" + name + "' is missing; expected " + what);
    }

    private static IllegalArgumentException wrong(String name, String what, Object value) {
        return new IllegalArgumentException("'" + name + "' is " + Json.write(value) + "; expected " + what);
    }
}
