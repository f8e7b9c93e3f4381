package dev.svcstub.junit;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** Something other than svc-stub answering at a URL (or an old svc-stub): a JDK HttpServer that answers each path as told. */
final class FakeServer implements AutoCloseable {
    private final HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();

    /** Answers each path of {@code answers} with its status and body, and 404 "not here" to any other. */
    FakeServer(Map<String, Map.Entry<Integer, String>> answers) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            Map.Entry<Integer, String> answer = answers.getOrDefault(exchange.getRequestURI().getPath(), Map.entry(404, "not here"));
            byte[] body = answer.getValue().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer.getKey(), body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
    }

    /** A svc-stub of version {@code version}, as far as the check can tell. */
    static FakeServer stubOfVersion(String version) throws IOException {
        return new FakeServer(Map.of("/health", Map.entry(200, "{\"ok\": true}"),
                "/_test/openapi.json", Map.entry(200, "{\"info\": {\"version\": \"" + version + "\"}}")));
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    int requests() {
        return requests.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
