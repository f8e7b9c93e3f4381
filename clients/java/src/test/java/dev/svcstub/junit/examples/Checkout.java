// Checkout.java: the application code under test
package dev.svcstub.junit.examples;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Asks the control-point service which checkout a user gets, falling back to "control" when the
 * service cannot say, and reports the exposure once the user has seen it.
 */
public final class Checkout {
    // the decision's value (an application would read the answer with its JSON library)
    private static final Pattern VALUE = Pattern.compile("\"value\"\\s*:\\s*\"([^\"]*)\"");

    private final HttpClient http = HttpClient.newHttpClient();
    private final String serviceUrl;
    private final Duration timeout;

    public Checkout(String serviceUrl) {
        this(serviceUrl, Duration.ofSeconds(60));
    }

    public Checkout(String serviceUrl, Duration timeout) {
        this.serviceUrl = serviceUrl;
        this.timeout = timeout;
    }

    public String variant(String userId) {
        String body = "{\"targetingKey\": \"" + userId + "\", \"flagKeys\": [\"checkout-v2\"]}";
        try {
            HttpResponse<String> answer = http.send(post("/v1/flags/evaluate", body), HttpResponse.BodyHandlers.ofString());
            Matcher value = VALUE.matcher(answer.body());
            return answer.statusCode() == 200 && value.find() ? value.group(1) : "control";
        } catch (IOException unavailable) {
            return "control";
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return "control";
        }
    }

    public void reportExposure(String userId, String variant) throws IOException, InterruptedException {
        String exposure = "{\"type\": \"exposure\", \"targetingKey\": \"" + userId + "\", \"flagKey\": \"checkout-v2\","
                + " \"variant\": \"" + variant + "\", \"value\": \"" + variant + "\"}";
        http.send(post("/v1/capture", "{\"events\": [" + exposure + "]}"), HttpResponse.BodyHandlers.discarding());
    }

    private HttpRequest post(String path, String json) {
        return HttpRequest.newBuilder(URI.create(serviceUrl + path))
                .timeout(timeout)
                .header("Authorization", "Bearer project-api-key_checkout")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
    }
}
