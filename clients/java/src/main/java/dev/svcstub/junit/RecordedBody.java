package dev.svcstub.junit;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Objects;
import java.util.Optional;

/** A body as it was sent: its text when it is UTF-8, else its bytes (base64 on the wire). */
public final class RecordedBody {
    private final Optional<String> text;
    private final Optional<String> base64;
    private final int size;

    private RecordedBody(Optional<String> text, Optional<String> base64, int size) {
        this.text = text;
        this.base64 = base64;
        this.size = size;
    }

    static RecordedBody from(Members members) {
        return new RecordedBody(members.optionalString("text"), members.optionalString("base64"), members.integer("bytes"));
    }

    /** The body as text, when it is UTF-8. */
    public Optional<String> text() {
        return text;
    }

    /** The body's bytes, whatever it is. */
    public byte[] bytes() {
        return text.map(t -> t.getBytes(StandardCharsets.UTF_8))
                .orElseGet(() -> Base64.getDecoder().decode(base64.orElse("")));
    }

    /** How many bytes it was. */
    public int size() {
        return size;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RecordedBody && text.equals(((RecordedBody) other).text)
                && base64.equals(((RecordedBody) other).base64) && size == ((RecordedBody) other).size;
    }

    @Override
    public int hashCode() {
        return Objects.hash(text, base64, size);
    }

    @Override
    public String toString() {
        return text.orElseGet(() -> "(" + size + " bytes, not UTF-8)");
    }
}
