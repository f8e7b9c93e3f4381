package dev.svcstub.junit;

import java.util.Map;
import java.util.Optional;

/** One request in full ({@code GET /_test/requests/{seq}}): the body it sent, the answer it got, a curl line. */
public final class RequestInFull {
    private final RecordedRequest request;
    private final Optional<RecordedBody> body;
    private final Optional<Answer> answer;
    private final String curl;

    private RequestInFull(Members members) {
        request = RecordedRequest.from(members);
        body = members.optionalObject("body").map(RecordedBody::from);
        answer = members.optionalObject("answer").map(Answer::new);
        curl = members.optionalString("curl").orElse("");
    }

    static RequestInFull from(Members members) {
        return new RequestInFull(members);
    }

    /** The request as the journal lists it. */
    public RecordedRequest request() {
        return request;
    }

    /** The body it sent, if it sent one. */
    public Optional<RecordedBody> body() {
        return body;
    }

    /** The answer it got; empty when none was given ({@code reset}, {@code hang}). */
    public Optional<Answer> answer() {
        return answer;
    }

    /** A curl command line that sends it again (secrets redacted). */
    public String curl() {
        return curl;
    }

    @Override
    public String toString() {
        return request + (body.isPresent() ? " " + body.get() : "");
    }

    /** The answer a request got. */
    public static final class Answer {
        private final int status;
        private final Map<String, String> headers;
        private final Optional<RecordedBody> body;

        private Answer(Members members) {
            status = members.integer("status");
            headers = members.stringMap("headers");
            body = members.optionalObject("body").map(RecordedBody::from);
        }

        public int status() {
            return status;
        }

        /** Its headers, as the stub sent them. */
        public Map<String, String> headers() {
            return headers;
        }

        public Optional<RecordedBody> body() {
            return body;
        }

        @Override
        public String toString() {
            return status + (body.isPresent() ? " " + body.get() : "");
        }
    }
}
