// The examples go doc and pkg.go.dev show. Those with an Output comment run with the package's
// tests, against the run's stub; those without are a test's body, compiled but not run (they
// need the *testing.T a test is given).
package svcstub_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// namespaceFor is a namespace of its own on the run's stub for an example (a test has
// svcstub.New(t) instead), deleted by the func it returns.
func namespaceFor(example string) (*svcstub.Client, func()) {
	stubURL, err := svcstub.RunURL()
	if err != nil {
		panic(err)
	}
	client, err := svcstub.NewClient(stubURL).CreateNamespace(context.Background(), example)
	if err != nil {
		panic(err)
	}
	return client, func() { _ = client.DeleteNamespace(context.Background(), "") }
}

// variantStatus is the code under test: one evaluate through client; its status.
func variantStatus(client *http.Client, serviceURL string) string {
	request, _ := http.NewRequest("POST", serviceURL+"/v1/flags/evaluate", strings.NewReader(`{"targetingKey": "user-1"}`))
	request.Header.Set("Authorization", "Bearer project-api-key_example")
	answer, err := client.Do(request)
	if err != nil {
		return "no answer"
	}
	defer answer.Body.Close()
	if retryAfter := answer.Header.Get("Retry-After"); retryAfter != "" {
		return fmt.Sprintf("%d, Retry-After %s", answer.StatusCode, retryAfter)
	}
	return fmt.Sprint(answer.StatusCode)
}

func ExampleNew() {
	var t *testing.T // a test's own: func TestCheckoutFallsBack(t *testing.T)

	t.Parallel()
	stub := svcstub.New(t) // a namespace of the test's own, deleted when it ends
	stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}})

	fmt.Println(variantStatus(http.DefaultClient, stub.URL)) // give the client under test stub.URL
	stub.AssertNoRequest(svcstub.RouteCapture)               // fails the test, in the stub's words
}

func ExampleStub_WithFault() {
	var t *testing.T // a test's own

	stub := svcstub.New(t)
	stub.WithFault(svcstub.Fault{Mode: svcstub.Mode429, RetryAfter: 2 * time.Second, TTLRequests: 1}, func() {
		fmt.Println(variantStatus(http.DefaultClient, stub.URL)) // 429, Retry-After 2
	}) // disarmed here
	stub.AssertNoRetryBeforeRetryAfter(svcstub.RouteEvaluate)
}

// A Transport faults every request of the client it is given, and no other client's.
func ExampleTransport() {
	stub, done := namespaceFor("ExampleTransport")
	defer done()

	faulty := &http.Client{Transport: &svcstub.Transport{
		Fault: svcstub.Fault{Mode: svcstub.ModeStatus, Status: 503, RetryAfter: 2 * time.Second},
	}}
	fmt.Println(variantStatus(faulty, stub.URL))
	fmt.Println(variantStatus(http.DefaultClient, stub.URL))
	// Output:
	// 503, Retry-After 2
	// 200
}

// A Sequence answers one matching request per Step, then is disarmed.
func ExampleStep() {
	stub, done := namespaceFor("ExampleStep")
	defer done()

	_, err := stub.Arm(context.Background(), svcstub.Fault{
		Sequence: []svcstub.Step{
			{Mode: svcstub.Mode500},
			{Mode: svcstub.ModeNone}, // served as usual
			{Mode: svcstub.Mode429, RetryAfter: 3 * time.Second},
		},
		ApplyTo: []svcstub.Selector{svcstub.OnEvaluate},
	})
	if err != nil {
		panic(err)
	}
	for i := 0; i < 4; i++ {
		fmt.Println(variantStatus(http.DefaultClient, stub.URL))
	}
	// Output:
	// 500
	// 200
	// 429, Retry-After 3
	// 200
}

// A request of the journal prints as one line, with %v and %+v alike; its times are durations.
func ExampleRequest() {
	stub, done := namespaceFor("ExampleRequest")
	defer done()

	variantStatus(&http.Client{Transport: &svcstub.Transport{Fault: svcstub.Fault{Mode: svcstub.Mode429}}}, stub.URL)
	requests, err := stub.Requests(context.Background(), svcstub.RouteEvaluate)
	if err != nil {
		panic(err)
	}
	line := fmt.Sprintf("%+v", requests[0]) // "#7 POST ...": Seq counts every request the stub served
	fmt.Println(line[strings.Index(line, " ")+1:])
	fmt.Println(requests[0].Route, *requests[0].RetryAfter, requests[0].Duration > 0)
	// Output:
	// POST /v1/flags/evaluate -> 429 (fault 429, header)
	// evaluate 1s true
}

// A wait that runs out says what it wanted and what came.
func ExampleWaitTimeoutError() {
	stub, done := namespaceFor("ExampleWaitTimeoutError")
	defer done()

	variantStatus(http.DefaultClient, stub.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := stub.WaitForRequests(ctx, 2, svcstub.RouteEvaluate)

	var timeout *svcstub.WaitTimeoutError
	if errors.As(err, &timeout) {
		fmt.Printf("wanted %d, got %d: %s %s\n", timeout.Want, timeout.Got, timeout.Requests[0].Method, timeout.Requests[0].Path)
	}
	// Output:
	// wanted 2, got 1: POST /v1/flags/evaluate
}
