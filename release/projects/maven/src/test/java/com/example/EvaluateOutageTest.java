package com.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.svcstub.junit.ArmedFault;
import dev.svcstub.junit.Fault;
import dev.svcstub.junit.FaultMode;
import dev.svcstub.junit.Route;
import dev.svcstub.junit.Selector;
import dev.svcstub.junit.SvcStub;
import dev.svcstub.junit.SvcStubExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(SvcStubExtension.class)
class EvaluateOutageTest {

    @Test
    void anArmed500IsWhatAPlainHttpCallSees(SvcStub stub) throws Exception {
        HttpRequest evaluate = HttpRequest.newBuilder(URI.create(stub.url() + "/v1/flags/evaluate"))
                .header("Authorization", "Bearer project-api-key_checkout")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"targetingKey\": \"user-1\", \"flagKeys\": [\"checkout-v2\"]}"))
                .build();

        try (ArmedFault outage = stub.arm(Fault.of(FaultMode.HTTP_500).applyTo(Selector.EVALUATE))) {
            HttpResponse<String> answer = HttpClient.newHttpClient().send(evaluate, HttpResponse.BodyHandlers.ofString());
            assertEquals(500, answer.statusCode());
        }
        assertEquals("user-1", stub.requests(Route.EVALUATE).get(0).json().get("targetingKey"));
    }
}
