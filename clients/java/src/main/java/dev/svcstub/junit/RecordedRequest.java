package dev.svcstub.junit;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import org.opentest4j.AssertionFailedError;

/**
 * One request as the journal records it ({@code GET /_test/requests}, in the order requests
 * arrived), in full: what it asked, the body it sent ({@link #text()}, {@link #json()}), the
 * answer it got.
 *
 * @param seq its number in the namespace's journal, in the order requests arrived
 * @param path the path as the client sent it, without the namespace's prefix ({@code /v1/flags/evaluate})
 * @param query the query parameters: a string each, or a list of strings for a repeated one
 * @param route the route's name ({@link Route#wireName()}); empty for a path the stub does not serve
 * @param status the answer's status; empty when no HTTP answer was given ({@code reset}, {@code hang}, a client that left)
 * @param clientGone whether the client went away before its answer was complete
 * @param fault the fault that fired on it, if one did
 * @param arrivedMs when it arrived, in ms on the stub's clock (one clock for every request)
 * @param durationMs how long its answer took, in ms
 * @param warning why the service would refuse the key it used, when the stub served it anyway
 * @param retryAfter the {@code Retry-After} it was answered with, in seconds
 * @param headers the headers the client sent, by lower-case name, secrets redacted
 * @param body the body it sent, if it sent one (keys in it redacted)
 * @param answer the answer it got; empty when none was given
 * @param curl a curl command line that sends it again (secrets redacted)
 */
public record RecordedRequest(int seq, String method, String path, Map<String, Object> query, Optional<String> route,
        OptionalInt status, boolean clientGone, Optional<FaultRecord> fault, double arrivedMs, double durationMs,
        Optional<String> warning, OptionalInt retryAfter, Map<String, String> headers, Optional<RecordedBody> body,
        Optional<Answer> answer, String curl) {

    static RecordedRequest from(Members members) {
        return new RecordedRequest(members.integer("seq"), members.string("method"), members.string("path"),
                members.optionalObject("query").map(Members::asMap).orElse(Map.of()), members.optionalString("route"),
                members.optionalInteger("status"), members.bool("clientGone"),
                members.optionalObject("fault").map(FaultRecord::from), members.number("arrivedMs"),
                members.number("durationMs"), members.optionalString("warning"), members.optionalInteger("retryAfter"),
                members.stringMap("headers"), members.optionalObject("body").map(RecordedBody::from),
                members.optionalObject("answer").map(Answer::from), members.optionalString("curl").orElse(""));
    }

    /** The body it sent, as text; empty when it sent none (or one that is not UTF-8). */
    public String text() {
        return body.flatMap(RecordedBody::text).orElse("");
    }

    /**
     * The body it sent, read as a JSON object (insertion-ordered; numbers as {@code Long} or
     * {@code Double}, arrays as {@code List}); an {@link AssertionFailedError} saying what it sent
     * instead when it sent none, or something else.
     */
    public Map<String, Object> json() {
        String text = body.orElseThrow(() -> new AssertionFailedError(this + ": it sent no body to read as JSON"))
                .text().orElseThrow(() -> new AssertionFailedError(this + ": its body is not text: " + body.get()));
        try {
            return Json.parseObject(text);
        } catch (IllegalArgumentException notAnObject) {
            throw new AssertionFailedError(this + ": its body is not a JSON object (" + notAnObject.getMessage() + "): "
                    + (text.length() > 200 ? text.substring(0, 200) + "..." : text));
        }
    }

    /** One line, as failure messages list it: {@code #3 POST /v1/capture -> 200}. */
    @Override
    public String toString() {
        return "#" + seq + " " + method + " " + path + " -> " + (status.isPresent() ? Integer.toString(status.getAsInt()) : "no answer");
    }

    /** The answer a request got: its status, its headers as the stub sent them, its body. */
    public record Answer(int status, Map<String, String> headers, Optional<RecordedBody> body) {
        static Answer from(Members members) {
            return new Answer(members.integer("status"), members.stringMap("headers"),
                    members.optionalObject("body").map(RecordedBody::from));
        }

        @Override
        public String toString() {
            return status + body.map(b -> " " + b).orElse("");
        }
    }
}
