// Provider.java: an infrastructure tool's code under test (a Terraform provider's resource)
package dev.svcstub.junit.examples;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Creates projects on the control-point service's management plane with an organisation key. */
public final class Provider {
    private static final Pattern PROJECT_ID = Pattern.compile("\"projectId\"\\s*:\\s*\"([^\"]+)\"");

    private final HttpClient http = HttpClient.newHttpClient();
    private final String serviceUrl;
    private final String orgKey;

    public Provider(String serviceUrl, String orgKey) {
        this.serviceUrl = serviceUrl;
        this.orgKey = orgKey;
    }

    /** The new project's id; an IOException naming the status when the service refuses. */
    public String createProject(String name, String slug) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(serviceUrl + "/v1/projects"))
                .header("Authorization", "Bearer " + orgKey)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\": \"" + name + "\", \"slug\": \"" + slug + "\"}"))
                .build();
        HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
        Matcher id = PROJECT_ID.matcher(answer.body());
        if (answer.statusCode() != 201 || !id.find()) {
            throw new IOException(answer.statusCode() + " " + answer.body());
        }
        return id.group(1);
    }
}
