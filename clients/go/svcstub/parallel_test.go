// Each test has a namespace of its own on the run's one stub: what it serves, arms and records
// stays there, and is gone when the test ends.
package svcstub_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-stub/svc-stub/clients/go/svcstub"
)

// checkNamespace checks the test's namespace is named after the test (the stub makes the name
// from t.Name(), readable and distinct).
func checkNamespace(t *testing.T, namespace string) {
	t.Helper()
	// The stub keeps both ends of a long test name: its start is this test's own.
	top := strings.Split(t.Name(), "/")[0]
	if !strings.HasPrefix(namespace, top[:min(len(top), 20)]) {
		t.Errorf("namespace %q is not named after the test %s", namespace, t.Name())
	}
}

func TestParallelTestsAreIsolated(t *testing.T) {
	const tests = 50
	var (
		mu         sync.Mutex
		namespaces = map[string]bool{}
	)
	t.Run("group", func(t *testing.T) {
		for i := 0; i < tests; i++ {
			i := i
			t.Run(fmt.Sprintf("test-%02d", i), func(t *testing.T) {
				t.Parallel()
				stub := svcstub.New(t)
				mu.Lock()
				namespaces[stub.Namespace] = true
				mu.Unlock()
				checkNamespace(t, stub.Namespace)

				mine := fmt.Sprintf("value of test %02d", i)
				stub.SetFixtures(map[string]any{"flags": map[string]any{"mine": map[string]any{"type": "string", "value": mine}}})
				faulted := i%2 == 0
				if faulted {
					stub.Arm(svcstub.Fault{Mode: svcstub.Mode500, ApplyTo: []svcstub.Selector{svcstub.OnEvaluate}, TTLRequests: 1})
				}

				first := postEvaluate(t, stub.URL, "mine")
				if faulted && first.status != 500 {
					t.Errorf("the first evaluate: %d %s, want this test's 500", first.status, first.raw)
				}
				if !faulted {
					checkServed(t, first, mine)
				}
				checkServed(t, postEvaluate(t, stub.URL, "mine"), mine)
				if armed := stub.Armed(); len(armed) != 0 {
					t.Errorf("armed = %+v, want none: its one request was faulted", armed)
				}

				requests := stub.Requests(svcstub.RouteEvaluate)
				if len(requests) != 2 {
					t.Fatalf("requests to evaluate = %+v, want this test's two", requests)
				}
				if fault := requests[0].Fault; faulted != (fault != nil) || faulted && (fault.Mode != svcstub.Mode500 || fault.Source != "armed") {
					t.Errorf("the first request's fault = %+v, want an armed 500: %t", fault, faulted)
				}
				if requests[1].Fault != nil || requests[1].StatusOr() != 200 {
					t.Errorf("the second request = %+v, want a 200", requests[1])
				}
				if answer := requests[1].Answer; answer == nil || answer.Body == nil || !strings.Contains(answer.Body.String(), mine) {
					t.Errorf("the journal's second request was not answered %q: %+v", mine, answer)
				}
			})
		}
	})
	if len(namespaces) != tests {
		t.Errorf("%d tests had %d namespaces", tests, len(namespaces))
	}

	stubURL, err := svcstub.RunURL()
	if err != nil {
		t.Fatal(err)
	}
	left, err := svcstub.NewClient(stubURL).Namespaces(within(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, namespace := range left {
		if namespaces[namespace.Name] {
			t.Errorf("namespace %s is still there after its test ended", namespace.Name)
		}
	}
}

// checkServed checks a client was served value for the flag "mine".
func checkServed(t *testing.T, answer clientAnswer, value string) {
	t.Helper()
	var body struct {
		Decisions []struct{ FlagKey, Value any }
	}
	if answer.status != 200 || json.Unmarshal(answer.raw, &body) != nil || len(body.Decisions) != 1 || body.Decisions[0].Value != value {
		t.Errorf("evaluate: %d %s, want %q served", answer.status, answer.raw, value)
	}
}

func TestTheNamespaceIsNamedAfterTheTest(t *testing.T) {
	for _, name := range []string{"plain", "spaces, symbols & ünïcode/ø", strings.Repeat("x", 80)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stub := svcstub.New(t)
			checkNamespace(t, stub.Namespace)
			if stub.URL != stub.BaseURL+"/ns/"+stub.Namespace {
				t.Errorf("URL = %s, want BaseURL/ns/Namespace", stub.URL)
			}
			postEvaluate(t, stub.URL, "checkout-v2")
			if requests := stub.Requests(svcstub.AnyRoute); len(requests) != 1 {
				t.Errorf("the namespace %s recorded %+v, want the test's request", stub.Namespace, requests)
			}
			if again := svcstub.New(t); again.Namespace == stub.Namespace {
				t.Errorf("two stubs of one test share the namespace %s", stub.Namespace)
			}
		})
	}
}
