package dev.svcstub.junit;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

/**
 * A body as it was sent: its text when it is UTF-8, else its bytes (base64 on the wire).
 *
 * @param text the body as text, when it is UTF-8
 * @param base64 the body's bytes in base64, when it is not
 * @param size how many bytes it was
 */
public record RecordedBody(Optional<String> text, Optional<String> base64, int size) {

    static RecordedBody from(Members members) {
        return new RecordedBody(members.optionalString("text"), members.optionalString("base64"), members.integer("bytes"));
    }

    /** The body's bytes, whatever it is. */
    public byte[] bytes() {
        return text.map(t -> t.getBytes(StandardCharsets.UTF_8)).orElseGet(() -> Base64.getDecoder().decode(base64.orElse("")));
    }

    @Override
    public String toString() {
        return text.orElseGet(() -> "(" + size + " bytes, not UTF-8)");
    }
}
